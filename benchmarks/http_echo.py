"""A minimal HTTP/1.1 keep-alive echo server and a closed-loop load client on asyncio.

Used by benchmarks only: small enough that the network path, not the server, is measured.

    python benchmarks/http_echo.py serve PORT
    python benchmarks/http_echo.py load HOST PORT SECONDS CONNECTIONS   -> prints JSON
"""

from __future__ import annotations

import asyncio
import json
import sys
import time

RESPONSE = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Type: text/plain\r\n\r\nok"
REQUEST = b"GET /echo HTTP/1.1\r\nHost: bench\r\n\r\n"


async def _handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            if not head:
                break
            writer.write(RESPONSE)
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


async def serve(port: int) -> None:
    server = await asyncio.start_server(_handle, "0.0.0.0", port, backlog=512)
    print("ready", flush=True)
    async with server:
        await server.serve_forever()


async def _client(host: str, port: int, until: float, lat: list[float]) -> None:
    reader, writer = await asyncio.open_connection(host, port)
    n = len(RESPONSE)
    while time.perf_counter() < until:
        t = time.perf_counter()
        writer.write(REQUEST)
        await reader.readexactly(n)
        lat.append(time.perf_counter() - t)
    writer.close()


async def load(host: str, port: int, seconds: float, conns: int) -> dict:
    lat: list[float] = []
    start = time.perf_counter()
    await asyncio.gather(*(_client(host, port, start + seconds, lat) for _ in range(conns)))
    elapsed = time.perf_counter() - start
    lat.sort()
    return {"requests": len(lat), "seconds": elapsed, "rps": len(lat) / elapsed,
            "p50_ms": 1000 * lat[len(lat) // 2], "p99_ms": 1000 * lat[int(len(lat) * 0.99)]}


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        asyncio.run(serve(int(sys.argv[2])))
    else:
        host, port, seconds, conns = sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
        print(json.dumps(asyncio.run(load(host, port, seconds, conns))))
