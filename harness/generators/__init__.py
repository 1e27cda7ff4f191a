"""Generated inputs for a continuum of any size, seeded and written as the ordinary files
(``harness generate``): an inventory (``continuum``), an app whose call graph follows the
statistics published for Alibaba's microservices and a modelled profile of it (``callgraph``,
``profile``), and a scenario whose load follows a day in the shape published for Azure Functions
(``day``); ``files`` writes a document and reads it back through its format's checks. Nothing is
downloaded: every number a generator draws from is in its module."""
