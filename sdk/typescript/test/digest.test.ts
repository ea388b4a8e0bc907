// The SDK's digests against the Go agent's: the RFC 8785 vectors made by an
// independent implementation (jcs/testdata/digest-vectors.json, found
// through SYMPHONIX_DIGEST_VECTORS or from this package's place in the
// repository), and the approval digests package approvals pins.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { approvalDigest, buildOf, canonicalJSON, digestOf, Outbox, stillTheSameThing } from "@symphonix/board-sdk";

interface Vector {
  name: string;
  input: string;
  canonical: string;
  digest: string;
}

const vectorsPath =
  process.env.SYMPHONIX_DIGEST_VECTORS ?? new URL("../../../../jcs/testdata/digest-vectors.json", import.meta.url).pathname;

test("canonicalJSON and digestOf match the vectors", async () => {
  const { vectors } = JSON.parse(readFileSync(vectorsPath, "utf8")) as { vectors: Vector[] };
  assert.ok(vectors.length > 20, `${vectorsPath}: ${vectors.length} vectors, want more than 20`);
  for (const v of vectors) {
    const value: unknown = JSON.parse(v.input);
    assert.equal(canonicalJSON(value), v.canonical, `canonicalJSON(${v.name})`);
    assert.equal(await digestOf(value), v.digest, `digestOf(${v.name})`);
    assert.equal(await buildOf(v.input), v.digest, `buildOf(${v.name})`);
  }
});

test("approvalDigest matches package approvals", async () => {
  const cases: { name: string; show: Record<string, unknown>; account: string; want: string }[] = [
    {
      name: "shown values and an account",
      show: { order: { id: "A-7", currency: "EUR", total: 5000 } },
      account: "the customer asked twice\nstock is there",
      want: "sha256:83c7074811d2965dab8f80da3d75512a9caf01adbc7599d5b25bc0e9087a3552",
    },
    {
      name: "no account is null",
      show: { amount: 5000.0 },
      account: "",
      want: "sha256:8417a9f9e14b7f813fdcca8c621797124ff31c504d5fc13b4ca33121c712c7ef",
    },
    {
      name: "the example's order",
      show: { order: { id: "A-1042", currency: "EUR", total: 5000 } },
      account: "Customer was charged twice for order A-1042.",
      want: "sha256:d3157854c4282b4741a825c3c4ba190f5b993fbb328cac0f95709e9aff17bcb6",
    },
  ];
  for (const c of cases) {
    assert.equal(await approvalDigest(c.show, c.account), c.want, `approvalDigest(${c.name})`);
  }
});

test("canonicalJSON refuses what is not JSON rather than change it", () => {
  assert.throws(() => canonicalJSON({ amount: Number.NaN }), RangeError);
  assert.throws(() => canonicalJSON([Number.POSITIVE_INFINITY]), RangeError);
  assert.throws(() => canonicalJSON({ n: 1n }), TypeError);
  assert.throws(() => canonicalJSON("\uD800"), TypeError);
  assert.throws(() => canonicalJSON(undefined), TypeError);
  let deep: unknown = 1;
  for (let i = 0; i < 1001; i++) deep = [deep];
  assert.throws(() => canonicalJSON(deep), TypeError);
});

test("canonicalJSON reads values as JSON.stringify does", () => {
  assert.equal(canonicalJSON({ b: undefined, a: [undefined, () => 1], d: new Date(0) }), '{"a":[null,null],"d":"1970-01-01T00:00:00.000Z"}');
  assert.equal(canonicalJSON({ "\u00e9": 1, z: 2, "\uD83D\uDE00": 3, "\uFB01": 4 }), '{"z":2,"é":1,"😀":3,"ﬁ":4}');
});

test("stillTheSameThing", () => {
  assert.equal(stillTheSameThing("sha256:aa", "sha256:aa"), true);
  assert.equal(stillTheSameThing("", "sha256:aa"), true);
  assert.equal(stillTheSameThing("sha256:bb", "sha256:aa"), false);
});

test("Outbox yields what is pushed, in order, until closed", async () => {
  const out = new Outbox<number>();
  out.push(1);
  const got: number[] = [];
  const reading = (async () => {
    for await (const n of out) got.push(n);
  })();
  out.push(2);
  await new Promise((r) => setImmediate(r));
  out.push(3);
  out.close();
  await reading;
  assert.deepEqual(got, [1, 2, 3]);
  assert.throws(() => out.push(4));
});
