/** Deliveries of a partition's consumer that never reached its loop (NATS JetStream log). */

/** Logged when deliveries were lost; tests read it. */
export const LOST_DELIVERIES_MESSAGE = 'deliveries were lost: the partition waits for their redelivery (ack_wait) before later batches';

/**
 * How many deliveries of the consumer never reached this loop: the consumer numbers every delivery
 * (redeliveries too), and one owner pulls at a time, so the numbers it sees are consecutive
 * unless messages the server sent never arrived. The pulls' inbox outlives them
 * (pull-subscription.ts), so this is a safety net: a subscription that missed messages (a
 * reconnect, a slow consumer's dropped messages). Those stay unacknowledged until ack_wait;
 * applying later ones first would apply a person's events out of order.
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
