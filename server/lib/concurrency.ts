/**
 * Runs `task` over `items` with at most `limit` in flight, keeping each outcome in the items' order
 * (as Promise.allSettled does, which would start them all at once).
 */
export async function settleWithLimit<T, R>(items: readonly T[], limit: number, task: (item: T) => Promise<R>): Promise<PromiseSettledResult<R>[]> {
  const outcomes: PromiseSettledResult<R>[] = new Array(items.length)
  let next = 0
  const worker = async () => {
    while (next < items.length) {
      const at = next++
      try {
        outcomes[at] = { status: 'fulfilled', value: await task(items[at]!) }
      } catch (reason) {
        outcomes[at] = { status: 'rejected', reason }
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
  return outcomes
}

/** `items` grouped by `key`, groups and items in first-seen order (Map.groupBy, which our TypeScript lib target lacks). */
export function groupBy<T, K>(items: Iterable<T>, key: (item: T) => K): Map<K, T[]> {
  const groups = new Map<K, T[]>()
  for (const item of items) {
    const k = key(item)
    const group = groups.get(k)
    if (group) group.push(item)
    else groups.set(k, [item])
  }
  return groups
}
