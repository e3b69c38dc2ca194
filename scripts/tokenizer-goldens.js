// Encodes texts with Hugging Face's tokenizers (npm tokenizers: the Rust
// crate, prebuilt) for core/hftok's goldens: per text of the JSON list in
// argv[3], "count hash" on stdout, hash being FNV-1a 32 of the ids as
// little-endian uint32s. Run by `go test ./core/hftok -run TestGoldens
// -update` with NODE_PATH at the fixtures' node_modules.
const fs = require("fs");
const { Tokenizer } = require("tokenizers");

function fnv1a(ids) {
  let h = 0x811c9dc5;
  for (const id of ids) {
    for (let k = 0; k < 4; k++) {
      h ^= (id >>> (8 * k)) & 0xff;
      h = Math.imul(h, 0x01000193) >>> 0;
    }
  }
  return h >>> 0;
}

async function main() {
  const [file, textsFile] = process.argv.slice(2);
  const tok = Tokenizer.fromFile(file);
  const texts = JSON.parse(fs.readFileSync(textsFile, "utf8"));
  const lines = [];
  for (const t of texts) {
    const ids = (await tok.encode(t, null, { addSpecialTokens: false })).getIds();
    lines.push(`${ids.length} ${fnv1a(ids).toString(16).padStart(8, "0")}`);
  }
  process.stdout.write(lines.join("\n") + "\n");
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
