// Loaded into each benchmarked server (`node --expose-gc --import bench/lib/probe.mjs …`): it
// answers the benchmark over the IPC channel with what only the process itself can see.
//
//   'loop'  the longest and the 99th-percentile event-loop delay since the last 'loop', in ms
//   'heap'  the heap in use after two full collections (the idle heap), in MB
import { monitorEventLoopDelay } from 'node:perf_hooks';

const delay = monitorEventLoopDelay({ resolution: 10 });
delay.enable();

if (process.send) {
  process.on('message', (message) => {
    if (message === 'loop') {
      process.send({ loop: { maxMs: delay.max / 1e6, p99Ms: delay.percentile(99) / 1e6 } });
      delay.reset();
    } else if (message === 'heap') {
      globalThis.gc?.();
      globalThis.gc?.();
      process.send({ heap: { usedMb: process.memoryUsage().heapUsed / 2 ** 20 } });
    }
  });
  // Listening refs the channel; unref'd, it never keeps the server from exiting.
  process.channel?.unref();
}
