/**
 * The share rule of the NATS log's partitions: with P partitions and N live nodes every node aims
 * at floor(P/N)..ceil(P/N) partitions. A node takes free partitions at once (a dead node's share
 * must not wait), but hands partitions over only once the set of live nodes has stayed the same
 * for `settleMs` (hysteresis: a node restarting or a connection blip moves nothing twice).
 */

/** Who holds what, as one look at PostgreSQL's locks showed it. */
export interface Survey {
  /** This node's member id. */
  self: number;
  /** Every live node (this one included) and how many partitions it holds. */
  held: Map<number, number>;
}

export interface ShareStep {
  /** How many free partitions this node may take now. */
  take: number;
  /** How many of its partitions this node should hand over now. */
  release: number;
}

export function shareBounds(partitions: number, nodes: number): { low: number; high: number } {
  const n = Math.max(1, nodes);
  return { low: Math.floor(partitions / n), high: Math.ceil(partitions / n) };
}

/**
 * One step towards the fair share. Nobody takes above `high`; while some node holds fewer than
 * `low`, nobody takes above `low` and a node above `low` gives one up, so the one below gets it.
 */
export function shareStep(partitions: number, survey: Survey): ShareStep {
  const held = new Map(survey.held);
  if (!held.has(survey.self)) held.set(survey.self, 0);
  const { low, high } = shareBounds(partitions, held.size);
  const mine = held.get(survey.self)!;
  const someoneShort = [...held].some(([node, count]) => node !== survey.self && count < low);
  const target = someoneShort ? low : high;
  const take = Math.max(0, target - mine);
  const release = mine > high ? mine - high : mine > low && someoneShort ? 1 : 0;
  return { take, release };
}

/** `shareStep` with the hysteresis: hand-overs wait until the live nodes have not changed for `settleMs`. */
export class FairShare {
  private members = '';
  private since = 0;

  constructor(
    private readonly partitions: number,
    private readonly settleMs: number,
  ) {}

  step(survey: Survey, now: number): ShareStep {
    const members = [...new Set([...survey.held.keys(), survey.self])].sort((a, b) => a - b).join(',');
    if (members !== this.members) {
      this.members = members;
      this.since = now;
    }
    const step = shareStep(this.partitions, survey);
    return now - this.since >= this.settleMs ? step : { take: step.take, release: 0 };
  }
}
