// The baseline: a bare node:http server answering a JSON body of the same size as a price record.
import { createServer } from "node:http";

const levels = Array.from({ length: 20 }, (_, i) => [0.5 + i / 1000, 100 + i, i % 2 ? "kalshi-sim" : "polymarket-sim"]);
const body = JSON.stringify({
  event_id: "fed-cut-2026-12",
  best_execution: { venue: "kalshi-sim", price: 0.51, fee_adjusted_price: 0.5275 },
  orderbook: { bids: levels, asks: levels },
});
const server = createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
    res.end(body);
  });
});
server.listen(0, "127.0.0.1", () => {
  const a = server.address();
  process.stdout.write(JSON.stringify({ port: typeof a === "object" && a ? a.port : 0 }) + "\n");
});
