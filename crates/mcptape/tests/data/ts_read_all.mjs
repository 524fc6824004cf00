// resources/list, then resources/read of every listed resource, through a connected client of
// either official TypeScript SDK (v1 in ts_sdk_client.mjs, v2 in ts_v2_client.mjs), each
// request bounded by `timeout` ({ timeout: MS }). Returns {listed, reads}: a read is
// {uri, ok, chars, contents} (ok: contents not empty; chars: text and blob characters;
// contents: the result's `contents` as the SDK parsed them) or, refused,
// {uri, ok: false, code, message}.
export async function readEveryListed(client, timeout) {
  const listed = await client.listResources(undefined, timeout);
  const reads = [];
  for (const r of listed.resources) {
    try {
      const res = await client.readResource({ uri: r.uri }, timeout);
      const contents = Array.isArray(res.contents) ? res.contents : [];
      const chars = contents.reduce((n, c) => n + (c.text ?? c.blob ?? "").length, 0);
      reads.push({ uri: r.uri, ok: contents.length > 0, chars, contents });
    } catch (e) {
      reads.push({ uri: r.uri, ok: false, code: e.code ?? null, message: String(e.message ?? e) });
    }
  }
  return { listed: listed.resources.length, reads };
}
