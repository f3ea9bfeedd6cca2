#!/usr/bin/env node
// attnlab's attention kernel beside ONNX Runtime's CPU attention operators, timed in
// interleaved pairs on the same inputs' shapes:
//   - com.microsoft MultiHeadAttention (unidirectional = 1 for the causal mask),
//   - com.microsoft GroupQueryAttention (causal only: the operator is causal without a cache),
//   - the standard Attention of opset 23 (is_causal).
// The models are built here, in memory, as ONNX protobuf bytes. Before any timing, each
// operator's output is checked against `attnlab attend --save` on a small case.
//
// onnxruntime-node is never needed by the build or the tests. Install it once, outside the
// build, without its install script (which fetches GPU binaries from a registry these
// machines cannot reach; the CPU runtime ships in the package itself):
//   npm install --prefix ~/.cache/attnlab-ort --ignore-scripts onnxruntime-node@1.30.0
// then:
//   node bench/compare_ort.mjs --attnlab build/release/attnlab
// attnlab's kernel runs the CPU's best target, or the one ATTNLAB_ISA names (scalar, sse4, avx2,
// avx512), which the runs here inherit; ONNX Runtime's MLAS always takes the CPU's best.
// Options: --ort DIR (default ~/.cache/attnlab-ort), --lens 1024,2048,4096,8192,
// --threads 1,2, --masks none,causal, --heads 8, --head-dim 64, --repeat 5.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';

const ORT_VERSION = '1.30.0';

function parseArgs(argv) {
  const o = { attnlab: 'build/release/attnlab', ort: join(homedir(), '.cache', 'attnlab-ort'), lens: [1024, 2048, 4096, 8192],
              threads: [1, 2], masks: ['none', 'causal'], heads: 8, headDim: 64, repeat: 5 };
  const list = (s) => s.split(',').filter((x) => x !== '');
  for (let i = 2; i < argv.length; i += 2) {
    const [k, v] = [argv[i], argv[i + 1]];
    if (v === undefined) usage(`${k} needs a value`);
    if (k === '--attnlab') o.attnlab = v;
    else if (k === '--ort') o.ort = v;
    else if (k === '--lens') o.lens = list(v).map(Number);
    else if (k === '--threads') o.threads = list(v).map(Number);
    else if (k === '--masks') o.masks = list(v);
    else if (k === '--heads') o.heads = Number(v);
    else if (k === '--head-dim') o.headDim = Number(v);
    else if (k === '--repeat') o.repeat = Number(v);
    else usage(`unknown option ${k}`);
  }
  const whole = [...o.lens, ...o.threads, o.heads, o.headDim, o.repeat];
  if (!whole.every((n) => Number.isInteger(n) && n >= 1)) usage('sizes, threads and --repeat are whole numbers >= 1');
  if (!o.masks.every((m) => m === 'none' || m === 'causal')) usage('--masks takes none and causal');
  return o;
}

function usage(why) {
  process.stderr.write(`compare_ort.mjs: ${why}\n`);
  process.exit(2);
}

function loadOrt(dir) {
  try {
    const ort = createRequire(join(dir, 'package.json'))('onnxruntime-node');
    return ort;
  } catch (e) {
    usage(`onnxruntime-node not found under ${dir}; install it with\n` +
          `  npm install --prefix ${dir} --ignore-scripts onnxruntime-node@${ORT_VERSION}`);
  }
}

// ---- ONNX protobuf, written by hand: varints and length-delimited fields ----

function varint(n) {
  const out = [];
  let v = BigInt(n);
  if (v < 0n) v += 1n << 64n;  // int64 two's complement
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v !== 0n) b |= 0x80;
    out.push(b);
  } while (v !== 0n);
  return out;
}
const key = (field, wire) => varint((field << 3) | wire);
const intField = (field, n) => [...key(field, 0), ...varint(n)];
const bytesField = (field, bytes) => [...key(field, 2), ...varint(bytes.length), ...bytes];
const strField = (field, s) => bytesField(field, [...Buffer.from(s, 'utf8')]);
function floatField(field, x) {
  const b = Buffer.alloc(4);
  b.writeFloatLE(x);
  return [...key(field, 5), ...b];
}

// AttributeProto: name 1, f 2, i 3, type 20 (FLOAT 1, INT 2).
const attrInt = (name, i) => [...strField(1, name), ...intField(3, i), ...intField(20, 2)];
const attrFloat = (name, f) => [...strField(1, name), ...floatField(2, f), ...intField(20, 1)];

// ValueInfoProto: name 1, type 2 = TypeProto { tensor_type 1 = { elem_type 1, shape 2 = { dim 1 = { dim_value 1 } } } }.
function valueInfo(name, elemType, dims) {
  const shape = dims.flatMap((d) => bytesField(1, intField(1, d)));
  const tensorType = [...intField(1, elemType), ...bytesField(2, shape)];
  return [...strField(1, name), ...bytesField(2, bytesField(1, tensorType))];
}

// NodeProto: input 1, output 2, name 3, op_type 4, attribute 5, domain 7.
function node(op, domain, inputs, outputs, attrs) {
  return [...inputs.flatMap((s) => strField(1, s)), ...outputs.flatMap((s) => strField(2, s)), ...strField(3, op), ...strField(4, op),
          ...attrs.flatMap((a) => bytesField(5, a)), ...(domain ? strField(7, domain) : [])];
}

// ModelProto: ir_version 1, producer_name 2, graph 7, opset_import 8 = { domain 1, version 2 }.
// GraphProto: node 1, name 2, input 11, output 12.
function model(nodeBytes, inputs, outputs) {
  const graph = [...bytesField(1, nodeBytes), ...strField(2, 'attention'), ...inputs.flatMap((v) => bytesField(11, v)),
                 ...outputs.flatMap((v) => bytesField(12, v))];
  const opsets = [bytesField(8, [...strField(1, ''), ...intField(2, 23)]), bytesField(8, [...strField(1, 'com.microsoft'), ...intField(2, 1)])];
  return Uint8Array.from([...intField(1, 11), ...strField(2, 'attnlab compare_ort'), ...bytesField(7, graph), ...opsets.flat()]);
}

const FLOAT = 1, INT32 = 6;

// Each operator: the model, and its feeds from q, k, v in attnlab's [B, H, L, d] layout.
function operators(B, H, L, d, causal) {
  const E = H * d, scale = 1 / Math.sqrt(d);
  const bse = (name) => valueInfo(name, FLOAT, [B, L, E]);
  const bhld = (name) => valueInfo(name, FLOAT, [B, H, L, d]);
  const merged = (t) => ({ data: mergeHeads(t, B, H, L, d), dims: [B, L, E] });
  const ops = [{
    name: 'MultiHeadAttention',
    bytes: model(node('MultiHeadAttention', 'com.microsoft', ['q', 'k', 'v'], ['out'],
                      [attrInt('num_heads', H), attrFloat('scale', scale), ...(causal ? [attrInt('unidirectional', 1)] : [])]),
                 [bse('q'), bse('k'), bse('v')], [bse('out')]),
    feeds: (q, k, v) => ({ q: merged(q), k: merged(k), v: merged(v) }),
    merged: true,
  }, {
    name: 'Attention (opset 23)',
    bytes: model(node('Attention', '', ['q', 'k', 'v'], ['out'], [attrInt('is_causal', causal ? 1 : 0), attrFloat('scale', scale)]),
                 [bhld('q'), bhld('k'), bhld('v')], [bhld('out')]),
    feeds: (q, k, v) => ({ q: { data: q, dims: [B, H, L, d] }, k: { data: k, dims: [B, H, L, d] }, v: { data: v, dims: [B, H, L, d] } }),
    merged: false,
  }];
  if (causal) {
    ops.push({
      name: 'GroupQueryAttention',
      bytes: model(node('GroupQueryAttention', 'com.microsoft', ['q', 'k', 'v', '', '', 'seqlens_k', 'total_sequence_length'], ['out'],
                        [attrInt('num_heads', H), attrInt('kv_num_heads', H), attrFloat('scale', scale)]),
                   [bse('q'), bse('k'), bse('v'), valueInfo('seqlens_k', INT32, [B]), valueInfo('total_sequence_length', INT32, [])],
                   [bse('out')]),
      // seqlens_k is the index of each sequence's last key (its length - 1).
      feeds: (q, k, v) => ({ q: merged(q), k: merged(k), v: merged(v), seqlens_k: { data: new Int32Array(B).fill(L - 1), dims: [B] },
                             total_sequence_length: { data: Int32Array.of(L), dims: [] } }),
      merged: true,
    });
  }
  return ops;
}

function mergeHeads(t, B, H, L, d) {
  const out = new Float32Array(t.length);
  for (let b = 0; b < B; ++b)
    for (let h = 0; h < H; ++h)
      for (let i = 0; i < L; ++i) out.set(t.subarray(((b * H + h) * L + i) * d, ((b * H + h) * L + i + 1) * d), ((b * L + i) * H + h) * d);
  return out;
}

// ---- NPY (little-endian float32, C order), as attnlab writes it ----
function readNpy(path) {
  const buf = readFileSync(path);
  if (buf.toString('latin1', 1, 6) !== 'NUMPY') throw new Error(`${path}: not an NPY file`);
  const major = buf[6], headerLen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8), start = (major === 1 ? 10 : 12) + headerLen;
  const header = buf.toString('latin1', major === 1 ? 10 : 12, start);
  if (!header.includes("'<f4'") || header.includes("'fortran_order': True")) throw new Error(`${path}: float32 in C order expected`);
  const data = new Float32Array(buf.buffer.slice(buf.byteOffset + start, buf.byteOffset + buf.length));
  return data;
}

async function session(ort, bytes, threads) {
  return ort.InferenceSession.create(bytes, { executionProviders: ['cpu'], intraOpNumThreads: threads, interOpNumThreads: 1,
                                              graphOptimizationLevel: 'all', executionMode: 'sequential' });
}

const tensors = (ort, feeds) => Object.fromEntries(Object.entries(feeds).map(([n, t]) => [n, new ort.Tensor(t.data instanceof Int32Array ? 'int32' : 'float32', t.data, t.dims)]));

// Each operator's output against attnlab's on a small case: within the error model's bound for
// two float32 implementations of the same sums, 4 (S + d) u (max |v| + 1), u = 2^-24.
async function verify(ort, attnlab, masks) {
  const B = 2, H = 4, L = 37, d = 16;
  for (const mask of masks) {
    const dir = mkdtempSync(join(tmpdir(), 'attnlab-ort-'));
    try {
      execFileSync(attnlab, ['attend', '--batch', String(B), '--len', String(L), '--heads', String(H), '--dim', String(H * d), '--mask', mask,
                             '--quiet', '--save', dir, '--seed', '7'], { stdio: ['ignore', 'ignore', 'inherit'] });
      const [q, k, v, out] = ['q', 'k', 'v', 'out'].map((n) => readNpy(join(dir, `${n}.npy`)));
      const bound = 4 * (L + d) * 2 ** -24 * (Math.max(...v.map(Math.abs)) + 1);
      for (const op of operators(B, H, L, d, mask === 'causal')) {
        const s = await session(ort, op.bytes, 1);
        const got = (await s.run(tensors(ort, op.feeds(q, k, v)))).out.data;
        const want = op.merged ? mergeHeads(out, B, H, L, d) : out;
        let worst = 0;
        for (let i = 0; i < want.length; ++i) worst = Math.max(worst, Math.abs(got[i] - want[i]));
        const ok = worst <= bound && got.length === want.length;
        console.log(`check  ${op.name}, mask ${mask}: max |ORT - attnlab| = ${worst.toExponential(3)} ${ok ? '<=' : '>'} ${bound.toExponential(3)}`);
        if (!ok) throw new Error(`${op.name} (mask ${mask}) does not compute what attnlab computes; no timing is meaningful`);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
}

function bench(attnlab, L, H, d, mask, threads) {
  const json = execFileSync(attnlab, ['bench', '--len', String(L), '--heads', String(H), '--head-dim', String(d), '--mask', mask,
                                      '--threads', String(threads), '--repeat', '3', '--quiet', '--format', 'json'], { encoding: 'utf8' });
  return JSON.parse(json).measurements;
}

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2; };
const spread = (xs) => ({ median: median(xs), min: Math.min(...xs), max: Math.max(...xs) });
const fmtS = (s) => `${s.median.toFixed(3)} s (${s.min.toFixed(3)}–${s.max.toFixed(3)})`;

// One shape: `repeat` pairs, each an attnlab bench run (the median of its three kernel runs,
// the first of which meets fresh pages, as ORT's warm-up run does, and its sgemm rate) then
// one run of each ORT operator (its session warmed up once), in that order.
async function timeShape(ort, o, L, mask, threads) {
  const H = o.heads, d = o.headDim, B = 1, n = B * H * L * d;
  let state = 12345;  // a fixed LCG: the same inputs on every run
  const draw = () => { state = (Math.imul(state, 1103515245) + 12345) >>> 0; return state / 2 ** 32 - 0.5; };
  const q = new Float32Array(n).map(draw), k = new Float32Array(n).map(draw), v = new Float32Array(n).map(draw);
  const ops = operators(B, H, L, d, mask === 'causal');
  const runs = [];
  for (const op of ops) runs.push({ op, s: await session(ort, op.bytes, threads), feeds: tensors(ort, op.feeds(q, k, v)), times: [] });
  for (const r of runs) await r.s.run(r.feeds);  // warm-up
  bench(o.attnlab, L, H, d, mask, threads);
  const ours = [], sgemm = [], flops = [];
  for (let i = 0; i < o.repeat; ++i) {
    const m = bench(o.attnlab, L, H, d, mask, threads);
    ours.push(m.seconds), sgemm.push(m.sgemm_gflops), flops.push(m.gflops * m.seconds);
    for (const r of runs) {
      const t0 = process.hrtime.bigint();
      await r.s.run(r.feeds);
      r.times.push(Number(process.hrtime.bigint() - t0) * 1e-9);
    }
  }
  for (const r of runs) await r.s.release();
  const best = runs.map((r) => ({ name: r.op.name, t: spread(r.times) })).sort((a, b) => a.t.median - b.t.median)[0];
  const work = median(flops), rate = median(sgemm), a = spread(ours);
  return { L, mask, threads, a, best, ratio: a.median / best.t.median, ourShare: work / a.median / rate, ortShare: work / best.t.median / rate, rate };
}

async function main() {
  const o = parseArgs(process.argv);
  const ort = loadOrt(o.ort);
  const { blas, isa } = bench(o.attnlab, 256, 2, o.headDim, 'none', 1);
  console.log(`attnlab ${o.attnlab} (kernel target ${isa}, ${blas}); onnxruntime-node ${ort.env?.versions?.common ?? ORT_VERSION}; B = 1, H = ${o.heads}, d = ${o.headDim}, float32, ${o.repeat} interleaved pairs`);
  await verify(ort, o.attnlab, o.masks);
  console.log('\n| L | mask | threads | attnlab median (range) | ORT best op | ORT median (range) | ratio | attnlab share of sgemm | ORT share |');
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const L of o.lens)
    for (const mask of o.masks)
      for (const threads of o.threads) {
        const r = await timeShape(ort, o, L, mask, threads);
        console.log(`| ${L} | ${mask} | ${threads} | ${fmtS(r.a)} | ${r.best.name} | ${fmtS(r.best.t)} | ${r.ratio.toFixed(2)} | ` +
                    `${r.ourShare.toFixed(2)} | ${r.ortShare.toFixed(2)} |`);
      }
  console.log('\nratio: attnlab median / ORT median (below 1: attnlab is faster). Shares: the useful work (the causal half only) per second,' +
              ' over the sgemm rate attnlab bench measured in the same pairs.');
}

main().catch((e) => {
  process.stderr.write(`compare_ort.mjs: ${e.message}\n`);
  process.exit(1);
});
