import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
/**
 * The drain window of a graceful shutdown. Closing the listening socket resets every
 * connection the kernel has completed but the server has not accepted yet, and closing an idle
 * keep-alive connection races a client that is just sending on it. So on SIGTERM the server
 * first keeps accepting and serving as usual, but answers with `Connection: close` (clients
 * open a fresh connection for their next request) and reports not ready on `/_ready` (load
 * balancers stop sending). The window ends once no request has arrived for `quietMs`, or after
 * `maxMs`; only then does the listener close.
 *
 * Quiet is counted only while the event loop turns on time: after a stall (a flush or a GC
 * holding the loop), connections may wait unaccepted in the kernel's backlog, and ending the
 * window then would reset them. A new connection counts as activity, like a request.
 */
export class Drain {
  private active = false;
  private lastActivityAt = 0;

  get draining(): boolean {
    return this.active;
  }

  /** Called for every request and every new connection. */
  seen(): void {
    this.lastActivityAt = performance.now();
  }

  /** Starts draining; resolves when the window is over. */
  async start(quietMs: number, maxMs: number): Promise<void> {
    this.active = true;
    const started = performance.now();
    this.lastActivityAt = Math.max(this.lastActivityAt, started);
    const step = Math.max(5, Math.min(50, quietMs / 4));
    let quietSince = this.lastActivityAt;
    for (;;) {
      const before = performance.now();
      await new Promise((resolve) => setTimeout(resolve, step));
      const now = performance.now();
      // A late timer means the loop stalled: what arrived meanwhile has not been read yet.
      if (now - before > step * 3) quietSince = now;
      quietSince = Math.max(quietSince, this.lastActivityAt);
      if (now - started >= maxMs || now - quietSince >= quietMs) return;
    }
  }
}

/** How long a connection accepted just before the listener closed may take to send its request. */
const FIRST_REQUEST_GRACE_MS = 1_000;

/**
 * The connections a closing server may end. Node's closeIdleConnections() also ends a
 * connection that was accepted but has not sent its first request yet — a client that has
 * just connected, whose request then fails with ECONNRESET. This reaper ends a connection only
 * once it has no request in progress and either has been answered (a keep-alive connection
 * waiting for more) or has sent nothing for a second.
 */
export class IdleReaper {
  private readonly connections = new Map<Socket, { active: number; answered: boolean; since: number }>();

  constructor(server: Server) {
    server.on('connection', (socket: Socket) => {
      this.connections.set(socket, { active: 0, answered: false, since: performance.now() });
      socket.once('close', () => this.connections.delete(socket));
    });
    server.on('request', (request: IncomingMessage, response: ServerResponse) => {
      const state = this.connections.get(request.socket);
      if (!state) return;
      state.active++;
      response.once('close', () => {
        state.active--;
        state.answered = true;
        state.since = performance.now();
      });
    });
  }

  reap(): void {
    const now = performance.now();
    for (const [socket, state] of this.connections) {
      if (state.active === 0 && (state.answered || now - state.since > FIRST_REQUEST_GRACE_MS)) socket.destroy();
    }
  }
}
