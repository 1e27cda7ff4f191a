"""The leaderboard: every registered policy on the same tracks (apps, inventories, scenarios),
played on the one ground, with its ranked tables, coverage and long table of every number."""
