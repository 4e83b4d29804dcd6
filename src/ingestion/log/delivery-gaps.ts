/** Deliveries of a partition's consumer that a fetch never handed to its loop (NATS JetStream log). */

/** Logged when a fetch lost deliveries; tests read it. */
export const LOST_DELIVERIES_MESSAGE = 'a fetch lost deliveries: the partition waits for their redelivery (ack_wait) before later batches';

/**
 * How many deliveries of the consumer never reached this loop: the consumer numbers every delivery
 * (redeliveries too), and one owner fetches at a time, so the numbers it sees are consecutive
 * unless a fetch's client closed before messages the server had sent arrived (the client ends a
 * fetch on its own timer, 5 % after the server's; a stalled event loop runs that timer before it
 * reads the socket). Those messages stay unacknowledged until ack_wait; applying later ones first
 * would apply a person's events out of order.
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
