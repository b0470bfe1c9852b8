// A loader process of its own (bench/load.ts loadApart): says `ready` on stdout, and when told `go` on stdin
// loads one URL with one fixed request for the job given as its argument, then writes what it saw, every
// latency included, as JSON on stdout.
import { once } from "node:events";
import { run, type LoaderJob } from "./load.ts";

const job = JSON.parse(process.argv[2]!) as LoaderJob;
process.stdout.write("ready\n");
process.stdin.resume();
await once(process.stdin, "end");
process.stdout.write(JSON.stringify(await run(job.baseUrl, job.request, { connections: job.connections, seconds: job.seconds })));
