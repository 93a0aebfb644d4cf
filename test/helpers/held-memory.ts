// What this process's JavaScript holds, measured after a full garbage collection: heap in use plus
// the memory of Buffers outside the heap. RSS also counts garbage not yet collected and pages the
// collector keeps, tens of MB that say nothing about what the code keeps.
import * as v8 from 'node:v8';
import * as vm from 'node:vm';

v8.setFlagsFromString('--expose-gc');
/** The collector, reached without starting node with --expose-gc. */
const collect = vm.runInNewContext('gc') as () => void;

/** Bytes held after a full collection (this thread's isolate: not the mirror's worker thread). */
export function heldBytes(): number {
  collect();
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
}
