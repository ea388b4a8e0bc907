// Digests, as the agent computes them and the board stores them: "sha256:"
// and the lowercase hex SHA-256 of a value's RFC 8785 (JSON Canonicalization
// Scheme) form. The Go agent's packages jcs and approvals compute the same
// strings; a digest is a protocol, so the two must never differ.

/** The deepest nesting of arrays and objects canonicalJSON accepts. */
export const maxDepth = 1000;

const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * canonicalJSON returns the RFC 8785 form of a JSON value: object keys sorted
 * by UTF-16 code units at every depth, no insignificant whitespace, strings
 * and numbers written as JSON.stringify writes them (which is what RFC 8785
 * specifies).
 *
 * The value is read as JSON.stringify reads it (toJSON is called; members
 * that are undefined, functions or symbols are left out of objects and are
 * null in arrays), except that it throws where JSON.stringify would quietly
 * write something else: a number that is not finite (RangeError), a bigint,
 * a string with a lone surrogate, nesting deeper than maxDepth (TypeError).
 */
export function canonicalJSON(value: unknown): string {
  const out = write(value, 0);
  if (out === undefined) {
    throw new TypeError("jcs: the value is not JSON (undefined, a function or a symbol)");
  }
  return out;
}

function write(value: unknown, depth: number): string | undefined {
  if (value !== null && typeof value === "object" && typeof (value as { toJSON?: unknown }).toJSON === "function") {
    value = (value as { toJSON: () => unknown }).toJSON();
  }
  switch (typeof value) {
    case "string":
      if (loneSurrogate.test(value)) {
        throw new TypeError("jcs: a string holds a lone UTF-16 surrogate");
      }
      return JSON.stringify(value);
    case "number":
      if (!Number.isFinite(value)) {
        throw new RangeError(`jcs: number out of range: ${value}`);
      }
      return JSON.stringify(value); // -0 is written 0, as RFC 8785 wants
    case "boolean":
      return value ? "true" : "false";
    case "bigint":
      throw new TypeError("jcs: a bigint is not a JSON number; pass a number or a string");
    case "object":
      break;
    default:
      return undefined; // undefined, function, symbol
  }
  if (value === null) {
    return "null";
  }
  if (depth >= maxDepth) {
    throw new TypeError(`jcs: nesting too deep: more than ${maxDepth} levels`);
  }
  if (Array.isArray(value)) {
    return "[" + value.map((e) => write(e, depth + 1) ?? "null").join(",") + "]";
  }
  const members: string[] = [];
  // The default sort compares UTF-16 code units: the order RFC 8785 wants.
  for (const key of Object.keys(value).sort()) {
    const v = write((value as Record<string, unknown>)[key], depth + 1);
    if (v !== undefined) {
      members.push(write(key, depth + 1) + ":" + v);
    }
  }
  return "{" + members.join(",") + "}";
}

/**
 * digestOf returns "sha256:" and the lowercase hex SHA-256 of the UTF-8 bytes
 * of canonicalJSON(value). It uses Web Crypto, so it works in Node (20 and
 * later) and in browsers alike.
 */
export async function digestOf(value: unknown): Promise<string> {
  const bytes = new TextEncoder().encode(canonicalJSON(value));
  const sum = new Uint8Array(await globalThis.crypto.subtle.digest("SHA-256", bytes));
  let hex = "";
  for (const b of sum) {
    hex += b.toString(16).padStart(2, "0");
  }
  return "sha256:" + hex;
}

/**
 * approvalDigest is the digest of the operation an approval puts in front of
 * a person: digestOf({show, account}), where account is null when it is "".
 * show holds the values shown, by the channel (or field) they came from;
 * account is the case for saying yes. Take it once, when the agent raises
 * the approval, and keep it with the question: the board hands it back with
 * the decision, and a decision whose digest is not the one kept belongs to
 * another operation (see stillTheSameThing).
 */
export function approvalDigest(show: Record<string, unknown>, account: string): Promise<string> {
  return digestOf({ show, account: account === "" ? null : account });
}

/**
 * buildOf is a flow's build, as an agent says it in its hello: the digest of
 * the flow's JSON text, so reformatting the file or reordering its keys does
 * not change it. It throws a SyntaxError for text that is not JSON. (JSON.parse
 * keeps the last of two equal keys in an object; the Go agent refuses such a
 * flow.)
 */
export function buildOf(flowJSON: string): Promise<string> {
  return digestOf(JSON.parse(flowJSON));
}

/**
 * stillTheSameThing reports whether a decision may be acted on for the
 * operation the agent holds: the digest the board handed back with it must be
 * the one the agent kept when it raised the approval. A decision with no
 * digest is accepted: it is what a board sends for an approval raised before
 * agents sent one.
 */
export function stillTheSameThing(decided: string, held: string): boolean {
  return decided === "" || decided === held;
}
