/** A Buffer over the same memory: bytes that crossed a thread arrive as a plain Uint8Array. */
export const asBuffer = (bytes: Uint8Array): Buffer => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
