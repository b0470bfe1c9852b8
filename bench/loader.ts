// A loader process of its own (bench/load.ts Loaders): says `ready`, then for each job (a line of JSON on
// stdin) loads one URL with one fixed request and answers what it saw, every latency included, as a line
// of JSON on stdout; ends with stdin.
import { createInterface } from "node:readline";
import { run, type LoaderJob } from "./load.ts";

process.stdout.write("ready\n");
for await (const line of createInterface({ input: process.stdin })) {
  const job = JSON.parse(line) as LoaderJob;
  process.stdout.write(JSON.stringify(await run(job.baseUrl, job.request, { connections: job.connections, seconds: job.seconds })) + "\n");
}
