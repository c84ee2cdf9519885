const CHUNK_BYTES = 64 * 1024

/** Thrown into the producer when the reader has gone away, so it stops (and its transaction rolls back). */
export class StreamCancelled extends Error {
  constructor() {
    super('the reader cancelled the stream')
  }
}

/**
 * A byte stream written by `produce` with backpressure: `write` batches text into 64 KiB chunks and,
 * once the reader's queue is full, waits until the reader asks for more. Memory therefore holds a few
 * chunks plus whatever the producer keeps, however much is written. A producer error ends the stream
 * with an error (the client sees a truncated body), after `onError` has been told.
 */
export function pullStream(produce: (write: (text: string) => Promise<void>) => Promise<void>, onError: (error: unknown) => void): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder()
  let pending = ''
  let cancelled = false
  let wake: (() => void) | null = null
  let controller!: ReadableStreamDefaultController<Uint8Array>

  const waitForDemand = async () => {
    while (!cancelled && (controller.desiredSize ?? 1) <= 0) await new Promise<void>((resolve) => (wake = resolve))
    if (cancelled) throw new StreamCancelled()
  }
  const flush = async () => {
    if (!pending) return
    await waitForDemand()
    controller.enqueue(encoder.encode(pending))
    pending = ''
  }
  const write = async (text: string) => {
    if (cancelled) throw new StreamCancelled()
    pending += text
    if (pending.length >= CHUNK_BYTES) await flush()
  }

  return new ReadableStream<Uint8Array>({
    start(ctl) {
      controller = ctl
      // Not awaited: start must return for the reader to begin pulling.
      void (async () => {
        try {
          await produce(write)
          await flush()
          controller.close()
        } catch (error) {
          if (error instanceof StreamCancelled) return
          onError(error)
          controller.error(error)
        }
      })()
    },
    pull() {
      wake?.()
      wake = null
    },
    cancel() {
      cancelled = true
      wake?.()
      wake = null
    },
  }, { highWaterMark: 4 })
}
