/**
 * An exact port of CPython's `random.Random` for what the reference's bootstrap uses:
 * MT19937, integer seeding (`init_by_array` over the seed's 32-bit words), `getrandbits(k)` for
 * k <= 32 and `randrange(n)` by rejection (docs/scoring.md "Bootstrap intervals, bit-for-bit").
 */
const N = 624;
const M = 397;
const MATRIX_A = 0x9908b0df | 0;
const UPPER = 0x80000000 | 0;
const LOWER = 0x7fffffff;
const TEMPER_B = 0x9d2c5680 | 0;
const TEMPER_C = 0xefc60000 | 0;

export class PyRandom {
  // Int32 storage keeps V8 on integer arithmetic (a Uint32Array read above 2^31 is a double).
  private readonly mt = new Int32Array(N);
  /** The current block of 624 tempered outputs, and the read position in it. */
  private readonly out = new Int32Array(N);
  private pos = N;

  constructor(seed: number | bigint) {
    this.seed(seed);
  }

  private initGenrand(s: number): void {
    const mt = this.mt;
    mt[0] = s | 0;
    for (let i = 1; i < N; i++) {
      const prev = mt[i - 1] ^ (mt[i - 1] >>> 30);
      // 1812433253 * prev + i, in 32-bit arithmetic.
      mt[i] = (Math.imul(1812433253, prev) + i) | 0;
    }
  }

  private initByArray(key: number[]): void {
    const mt = this.mt;
    this.initGenrand(19650218);
    let i = 1;
    let j = 0;
    const len = key.length;
    for (let k = N > len ? N : len; k > 0; k--) {
      const prev = mt[i - 1] ^ (mt[i - 1] >>> 30);
      mt[i] = ((mt[i] ^ Math.imul(prev, 1664525)) + key[j] + j) | 0;
      i++;
      j++;
      if (i >= N) {
        mt[0] = mt[N - 1];
        i = 1;
      }
      if (j >= len) j = 0;
    }
    for (let k = N - 1; k > 0; k--) {
      const prev = mt[i - 1] ^ (mt[i - 1] >>> 30);
      mt[i] = ((mt[i] ^ Math.imul(prev, 1566083941)) - i) | 0;
      i++;
      if (i >= N) {
        mt[0] = mt[N - 1];
        i = 1;
      }
    }
    mt[0] = 0x80000000 | 0;
    this.pos = N;
  }

  /** `random.seed(int)`: the absolute value as little-endian 32-bit words. */
  seed(seed: number | bigint): void {
    let s = BigInt(seed);
    if (s < 0n) s = -s;
    const key: number[] = [];
    while (s > 0n) {
      key.push(Number(s & 0xffffffffn));
      s >>= 32n;
    }
    if (key.length === 0) key.push(0);
    this.initByArray(key);
  }

  /** The MT19937 twist, then temper the whole block at once. */
  private refill(): void {
    const mt = this.mt;
    let kk = 0;
    let y: number;
    for (; kk < N - M; kk++) {
      y = (mt[kk] & UPPER) | (mt[kk + 1] & LOWER);
      mt[kk] = mt[kk + M] ^ (y >>> 1) ^ (y & 1 ? MATRIX_A : 0);
    }
    for (; kk < N - 1; kk++) {
      y = (mt[kk] & UPPER) | (mt[kk + 1] & LOWER);
      mt[kk] = mt[kk + (M - N)] ^ (y >>> 1) ^ (y & 1 ? MATRIX_A : 0);
    }
    y = (mt[N - 1] & UPPER) | (mt[0] & LOWER);
    mt[N - 1] = mt[M - 1] ^ (y >>> 1) ^ (y & 1 ? MATRIX_A : 0);
    const out = this.out;
    for (let i = 0; i < N; i++) {
      let t = mt[i];
      t ^= t >>> 11;
      t ^= (t << 7) & TEMPER_B;
      t ^= (t << 15) & TEMPER_C;
      t ^= t >>> 18;
      out[i] = t;
    }
    this.pos = 0;
  }

  /** `genrand_uint32`. */
  nextUint32(): number {
    if (this.pos >= N) this.refill();
    return this.out[this.pos++] >>> 0;
  }

  /** `getrandbits(k)` for 1 <= k <= 32. */
  getrandbits(k: number): number {
    return this.nextUint32() >>> (32 - k);
  }

  /** `randrange(n)` = `_randbelow(n)`: draw bit_length(n) bits until the value is below n. */
  randrange(n: number): number {
    const shift = Math.clz32(n);
    let r: number;
    do {
      if (this.pos >= N) this.refill();
      r = this.out[this.pos++] >>> shift;
    } while (r >= n);
    return r;
  }

  /** Fills `dest` with successive `randrange(n)` draws (the bootstrap's hot loop), 1 <= n < 2^31. */
  fillRandrange(n: number, dest: Uint32Array | Uint16Array): void {
    const shift = Math.clz32(n);
    const out = this.out;
    let pos = this.pos;
    for (let i = 0; i < dest.length; i++) {
      let r: number;
      do {
        if (pos >= N) {
          this.refill();
          pos = 0;
        }
        r = out[pos++] >>> shift;
      } while (r >= n);
      dest[i] = r;
    }
    this.pos = pos;
  }

  /** `random()`: 53-bit float, as CPython builds it. */
  random(): number {
    const a = this.nextUint32() >>> 5;
    const b = this.nextUint32() >>> 6;
    return (a * 67108864 + b) * (1 / 9007199254740992);
  }
}
