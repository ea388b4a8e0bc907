// What an agent needs beside the generated messages to speak the link
// (AgentLinkService.Link): the protocol it says in its hello, the names of
// the capabilities a board knows, a bearer-token interceptor, and a queue to
// feed the request side of the bidi stream.

import type { Interceptor } from "@connectrpc/connect";

/** The link protocol this SDK speaks: Hello.protocol. */
export const protocol = "3";

/**
 * The capabilities a board knows, for Hello.capabilities. An agent announces
 * one only when the code behind it runs in its process; the board sends what
 * needs a capability only to agents that announce it (docs/link.md,
 * "Capabilities"). An agent that implements none announces none.
 */
export const Capability = Object.freeze({
  /** It asks the board who people are (howToIdentify, verify). */
  users: "users",
  /** It shows pairing codes and takes "paired". */
  pairing: "pairing",
  /** It runs health checks and reports rounds ("health"). */
  health: "health",
  /** It can stop taking new work and says so ("pauseState"); it takes "pause". */
  pause: "pause",
} as const);

/**
 * bearer sends token in the Authorization header of every call: an operator
 * token for the operator services, an agent token for the link.
 */
export function bearer(token: string): Interceptor {
  return (next) => (req) => {
    req.header.set("Authorization", `Bearer ${token}`);
    return next(req);
  };
}

/**
 * Outbox is the request side of a client or bidi stream: an async iterable
 * that yields what is pushed, in order, until it is closed. Pass it to the
 * streaming method and push messages while the responses are read:
 *
 *     const out = new Outbox<LinkRequest>();
 *     out.push(create(LinkRequestSchema, { kind: { case: "hello", value: hello } }));
 *     for await (const res of client.link(out)) { ... }
 *
 * Only one consumer may iterate it.
 */
export class Outbox<T> implements AsyncIterable<T> {
  private queue: T[] = [];
  private wake: (() => void) | undefined;
  private closed = false;

  /** push queues a message; it throws once the outbox is closed. */
  push(msg: T): void {
    if (this.closed) {
      throw new Error("outbox: push after close");
    }
    this.queue.push(msg);
    this.wake?.();
  }

  /**
   * close ends the stream's request side once what is queued is sent (the
   * agent's goodbye on the link). Closing twice is harmless.
   */
  close(): void {
    this.closed = true;
    this.wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    for (;;) {
      const msg = this.queue.shift();
      if (msg !== undefined) {
        yield msg;
        continue;
      }
      if (this.closed) {
        return;
      }
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
      this.wake = undefined;
    }
  }
}
