/**
 * A child process that answers calls as a worker thread does (a CallPeer of worker-calls.ts), for
 * a callee whose native library should leave with it. A thread's library stays mapped in the
 * process after the thread ends: libduckdb's pages and the allocations DuckDB made kept ~40 MB of
 * an idle server's RSS after its event store had closed. A child's go when it exits.
 *
 * Messages cross the IPC pipe with V8's serializer (`serialization: 'advanced'`), as a thread's
 * structured clones do: Dates, Maps and Buffers keep their types; shared memory is copied.
 */
import { fork, type ChildProcess, type Serializable } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { fileURLToPath } from 'node:url';

/** The environment variable that carries the child's input (its `workerData`), as JSON. */
export const CHILD_DATA_VARIABLE = 'SIGHTLINE_CHILD_DATA';

/** V8 heap sizes the server was started with (`npm start`'s): the child sizes its heap the same. */
const inheritedFlags = () => process.execArgv.filter((flag) => /^--max-(semi|old)-space-size=/.test(flag));

export class ChildWorker extends EventEmitter {
  private readonly child: ChildProcess;
  private readonly exited: Promise<void>;

  constructor(modulePath: string, execArgv: string[], data: unknown) {
    super();
    this.child = fork(modulePath, [], {
      execArgv,
      serialization: 'advanced',
      env: { ...process.env, [CHILD_DATA_VARIABLE]: JSON.stringify(data) },
    });
    this.exited = new Promise((resolve) =>
      this.child.once('exit', (code, signal) => {
        this.emit('exit', code ?? signal);
        resolve();
      }),
    );
    this.child.on('message', (message) => this.emit('message', message));
    this.child.on('error', (error) => this.emit('error', error));
  }

  postMessage(message: unknown): void {
    this.child.send(message as Serializable, (error) => {
      if (error) this.emit('error', error);
    });
  }

  ref(): void {
    this.child.ref();
    this.child.channel?.ref();
  }

  unref(): void {
    this.child.unref();
    this.child.channel?.unref();
  }

  /** Kills the child, as Worker.terminate() ends a thread, and resolves once it has exited. */
  async terminate(): Promise<void> {
    // Held until the exit, as Worker.terminate() holds a thread: the caller awaits it.
    this.child.ref();
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
    await this.exited;
  }
}

/**
 * Starts `baseName` next to the caller as a child process. Built code runs the compiled `.js`
 * file; a caller running from TypeScript source (tests, benchmarks) starts it under tsx.
 */
export function startChild(callerUrl: string, baseName: string, data: unknown): ChildWorker {
  const fromSource = callerUrl.endsWith('.ts');
  const file = fileURLToPath(new URL(`./${baseName}.${fromSource ? 'ts' : 'js'}`, callerUrl));
  return new ChildWorker(file, [...(fromSource ? ['--import', 'tsx'] : []), ...inheritedFlags()], data);
}
