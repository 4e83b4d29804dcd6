/** Deliveries of a partition's consumer that a fetch never handed to its loop (NATS JetStream log). */

/** Logged when a fetch lost deliveries; tests read it. */
export const LOST_DELIVERIES_MESSAGE = 'a fetch lost deliveries: they come back after ack_wait, after later batches of the partition';

/**
 * How many deliveries of the consumer never reached this loop: the consumer numbers every delivery
 * (redeliveries too), and one owner fetches at a time, so the numbers it sees are consecutive
 * unless a fetch's client closed before messages the server had sent arrived (the client ends a
 * fetch on its own timer, 5 % after the server's; a stalled event loop runs that timer before it
 * reads the socket). Those messages stay unacknowledged until ack_wait, so their events are then
 * applied after later ones of the same persons.
 */
export function lostDeliveries(last: number | null, deliveries: number[]): number {
  let lost = 0;
  let previous = last;
  for (const seq of deliveries) {
    if (previous !== null && seq > previous + 1) lost += seq - previous - 1;
    previous = seq;
  }
  return lost;
}
