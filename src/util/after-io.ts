/** Resolves after the event loop has polled for I/O once (lets waiting messages and requests in). */
export const afterIo = () => new Promise<void>((resolve) => setImmediate(resolve));
