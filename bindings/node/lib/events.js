'use strict'
/**
 * Event streams: the native side hands over events in batches; JS reads them one by one.
 * @module agent-core/events
 */

/**
 * An async iterator over a native event stream, each event passed through `each` (which
 * attaches a fatal tool error to an outcome). Closing the iterator early closes the stream, so
 * an abandoned `for await` stops buffering.
 * @param {{ next(): Promise<any[] | null>, close(): void }} stream
 * @param {(event: any) => any} each
 */
function iterate(stream, each) {
  return (async function* events() {
    try {
      for (;;) {
        const batch = await stream.next()
        if (batch === null) return
        for (const ev of batch) yield each(ev)
      }
    } finally {
      stream.close()
    }
  })()
}

module.exports = { iterate }
