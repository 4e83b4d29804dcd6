/**
 * A MaxMind DB (`.mmdb`, format 2) reader that keeps the file on disk: the search tree and the
 * records are read with positional reads through a small cache of pages, instead of the whole
 * file living in memory (the GeoLite2 City pair is ~45 MB, more than half of an idle server's
 * own memory). The operating system's page cache keeps the hot parts of the file close anyway,
 * and that memory is reclaimable rather than the process's own.
 *
 * Format facts used here (MaxMind DB File Format Specification 2.0): the metadata is a map at
 * the end of the file after the marker `\xAB\xCD\xEFMaxMind.com`; the search tree's nodes come
 * first, two records of `record_size` bits each; a record equal to `node_count` means "not
 * found", a larger one points into the data section, which starts 16 bytes after the tree.
 */
import fs from 'node:fs';

const METADATA_MARKER = Buffer.from('abcdef4d61784d696e642e636f6d', 'hex');
/** The metadata lives in the file's last 128 KiB. */
const METADATA_MAX_BYTES = 128 * 1024;
const DATA_SECTION_SEPARATOR = 16;
const PAGE_BYTES = 4096;
/** Decoded records kept (a few KB of small objects per hundred). */
const RECORD_CACHE_ENTRIES = 10_000;

export class MmdbFormatError extends Error {}

interface Metadata {
  nodeCount: number;
  recordSize: 24 | 28 | 32;
  ipVersion: 4 | 6;
}

/**
 * Positional reads through a cache of whole pages. Eviction is a clock (second chance): a page
 * read since the hand last passed it stays, so the search tree's upper levels, read by every
 * lookup, never leave; nothing is reordered on a hit.
 */
class PagedFile {
  private readonly pages: (Buffer | undefined)[];
  private readonly referenced: Uint8Array;
  /** Resident page numbers, in the clock's order. */
  private readonly resident: Int32Array;
  private residentCount = 0;
  private hand = 0;

  constructor(
    private readonly fd: number,
    readonly size: number,
    maxPages: number,
  ) {
    const pageCount = Math.ceil(size / PAGE_BYTES);
    this.pages = new Array<Buffer | undefined>(pageCount);
    this.referenced = new Uint8Array(pageCount);
    this.resident = new Int32Array(Math.min(maxPages, pageCount));
  }

  /** `length` bytes at `offset` (a view into a cached page when they fit in one). */
  bytes(offset: number, length: number): Buffer {
    if (offset < 0 || offset + length > this.size) throw new MmdbFormatError(`read past the end of the database (${offset}+${length})`);
    const first = Math.floor(offset / PAGE_BYTES);
    const last = Math.floor((offset + length - 1) / PAGE_BYTES);
    if (first === last) {
      const start = offset - first * PAGE_BYTES;
      return this.page(first).subarray(start, start + length);
    }
    const out = Buffer.allocUnsafe(length);
    let written = 0;
    for (let index = first; index <= last; index++) {
      const page = this.page(index);
      const start = index === first ? offset - first * PAGE_BYTES : 0;
      const end = Math.min(page.length, start + (length - written));
      written += page.copy(out, written, start, end);
    }
    return out;
  }

  byte(offset: number): number {
    if (offset < 0 || offset >= this.size) throw new MmdbFormatError(`read past the end of the database (${offset})`);
    const index = Math.floor(offset / PAGE_BYTES);
    return this.page(index)[offset - index * PAGE_BYTES];
  }

  page(index: number): Buffer {
    const cached = this.pages[index];
    if (cached) {
      this.referenced[index] = 1;
      return cached;
    }
    let page: Buffer;
    if (this.residentCount < this.resident.length) {
      page = Buffer.allocUnsafe(PAGE_BYTES);
      this.resident[this.residentCount++] = index;
    } else {
      page = this.evict();
      this.resident[this.hand] = index;
      this.hand = (this.hand + 1) % this.resident.length;
    }
    const start = index * PAGE_BYTES;
    const length = Math.min(PAGE_BYTES, this.size - start);
    fs.readSync(this.fd, page, 0, length, start);
    const view = length === PAGE_BYTES ? page : page.subarray(0, length);
    this.pages[index] = view;
    return view;
  }

  /** Frees the slot under the hand (after giving referenced pages a second chance); returns its memory. */
  private evict(): Buffer {
    for (;;) {
      const index = this.resident[this.hand];
      if (this.referenced[index]) {
        this.referenced[index] = 0;
        this.hand = (this.hand + 1) % this.resident.length;
        continue;
      }
      const page = this.pages[index]!;
      this.pages[index] = undefined;
      return Buffer.from(page.buffer, page.byteOffset, PAGE_BYTES);
    }
  }

  close(): void {
    this.pages.fill(undefined);
    fs.closeSync(this.fd);
  }
}

export interface MmdbOptions {
  /** Bytes of the file kept in memory (whole pages, least recently used go first). */
  cacheBytes?: number;
}

export class MmdbFile {
  private readonly file: PagedFile;
  private readonly metadata: Metadata;
  private readonly nodeBytes: number;
  private readonly dataStart: number;
  /** Node where IPv4 addresses start in an IPv6 tree (after 96 zero bits). */
  private ipv4Start: number | null = null;
  private readonly decoder: Decoder;
  private readonly records = new Map<number, unknown>();

  private constructor(file: PagedFile) {
    this.file = file;
    this.metadata = readMetadata(file);
    this.nodeBytes = (this.metadata.recordSize * 2) / 8;
    this.dataStart = this.metadata.nodeCount * this.nodeBytes + DATA_SECTION_SEPARATOR;
    this.decoder = new Decoder(file, this.dataStart);
  }

  static open(path: string, options: MmdbOptions = {}): MmdbFile {
    const fd = fs.openSync(path, 'r');
    try {
      const size = fs.fstatSync(fd).size;
      const pages = Math.max(16, Math.floor((options.cacheBytes ?? 2 * 2 ** 20) / PAGE_BYTES));
      return new MmdbFile(new PagedFile(fd, size, pages));
    } catch (error) {
      fs.closeSync(fd);
      throw error;
    }
  }

  get ipVersion(): 4 | 6 {
    return this.metadata.ipVersion;
  }

  /** The record of an address given as its bytes (4 for IPv4, 16 for IPv6); null when absent. */
  get(address: Uint8Array): unknown {
    const bits = address.length * 8;
    let node: number;
    if (address.length === 4 && this.metadata.ipVersion === 6) node = this.ipv4StartNode();
    else if (address.length === 16 && this.metadata.ipVersion === 4) return null;
    else node = 0;
    const { nodeCount } = this.metadata;
    for (let i = 0; i < bits && node < nodeCount; i++) {
      const bit = (address[i >> 3] >> (7 - (i & 7))) & 1;
      node = this.record(node, bit);
    }
    if (node === nodeCount) return null;
    if (node < nodeCount) throw new MmdbFormatError('the search tree is deeper than the address');
    const offset = this.dataStart + (node - nodeCount - DATA_SECTION_SEPARATOR);
    // Many networks share one record (a city): decode it once. Callers must not change it.
    let record = this.records.get(offset);
    if (record === undefined) {
      record = this.decoder.value(offset).value;
      if (this.records.size >= RECORD_CACHE_ENTRIES) this.records.clear();
      this.records.set(offset, record);
    }
    return record;
  }

  private ipv4StartNode(): number {
    if (this.ipv4Start === null) {
      let node = 0;
      for (let i = 0; i < 96 && node < this.metadata.nodeCount; i++) node = this.record(node, 0);
      this.ipv4Start = node;
    }
    return this.ipv4Start;
  }

  /** The left (0) or right (1) record of a node. */
  private record(node: number, side: number): number {
    const at = node * this.nodeBytes;
    const inPage = at % PAGE_BYTES;
    let b: Buffer;
    let i = 0;
    if (inPage + this.nodeBytes <= PAGE_BYTES) {
      // The common case, without a view object per step.
      b = this.file.page((at - inPage) / PAGE_BYTES);
      i = inPage;
    } else b = this.file.bytes(at, this.nodeBytes);
    switch (this.metadata.recordSize) {
      case 24:
        return side === 0 ? (b[i] << 16) | (b[i + 1] << 8) | b[i + 2] : (b[i + 3] << 16) | (b[i + 4] << 8) | b[i + 5];
      case 28:
        // The middle byte holds the high nibble of both records.
        return side === 0
          ? ((b[i + 3] & 0xf0) << 20) | (b[i] << 16) | (b[i + 1] << 8) | b[i + 2]
          : ((b[i + 3] & 0x0f) << 24) | (b[i + 4] << 16) | (b[i + 5] << 8) | b[i + 6];
      case 32:
        return side === 0 ? b.readUInt32BE(i) : b.readUInt32BE(i + 4);
    }
  }

  close(): void {
    this.file.close();
  }
}

/** Decodes the data section's self-describing values. */
class Decoder {
  constructor(
    private readonly file: PagedFile,
    /** Where pointers count from. */
    private readonly base: number,
  ) {}

  /** The value at `offset` and the offset just past it. */
  value(offset: number): { value: unknown; next: number } {
    const control = this.file.byte(offset++);
    let type = control >> 5;
    if (type === 1) {
      const { target, next } = this.pointer(control, offset);
      return { value: this.value(target).value, next };
    }
    if (type === 0) type = 7 + this.file.byte(offset++);
    let size = control & 0x1f;
    if (type !== 14 && size >= 29) {
      const extra = size - 28;
      const b = this.file.bytes(offset, extra);
      offset += extra;
      if (extra === 1) size = 29 + b[0];
      else if (extra === 2) size = 285 + ((b[0] << 8) | b[1]);
      else size = 65_821 + ((b[0] << 16) | (b[1] << 8) | b[2]);
    }
    switch (type) {
      case 2:
        return { value: this.file.bytes(offset, size).toString('utf8'), next: offset + size };
      case 3:
        if (size !== 8) throw new MmdbFormatError('a double must have 8 bytes');
        return { value: this.file.bytes(offset, 8).readDoubleBE(0), next: offset + 8 };
      case 4:
        return { value: Buffer.from(this.file.bytes(offset, size)), next: offset + size };
      case 5:
      case 6:
        return { value: this.unsigned(offset, size), next: offset + size };
      case 8:
        // Shorter than 4 bytes means the leading bytes are zero, so only 4 can be negative.
        return { value: size === 4 ? this.file.bytes(offset, 4).readInt32BE(0) : this.unsigned(offset, size), next: offset + size };
      case 9:
      case 10:
        return { value: this.bigUnsigned(offset, size), next: offset + size };
      case 7: {
        const map: Record<string, unknown> = {};
        for (let i = 0; i < size; i++) {
          const key = this.value(offset);
          const entry = this.value(key.next);
          map[String(key.value)] = entry.value;
          offset = entry.next;
        }
        return { value: map, next: offset };
      }
      case 11: {
        const list: unknown[] = [];
        for (let i = 0; i < size; i++) {
          const item = this.value(offset);
          list.push(item.value);
          offset = item.next;
        }
        return { value: list, next: offset };
      }
      case 14:
        return { value: size !== 0, next: offset };
      case 15:
        if (size !== 4) throw new MmdbFormatError('a float must have 4 bytes');
        return { value: this.file.bytes(offset, 4).readFloatBE(0), next: offset + 4 };
      default:
        throw new MmdbFormatError(`unknown data type ${type}`);
    }
  }

  private pointer(control: number, offset: number): { target: number; next: number } {
    const sizeBits = (control >> 3) & 0x3;
    const low = control & 0x7;
    const b = this.file.bytes(offset, sizeBits + 1);
    let target: number;
    if (sizeBits === 0) target = (low << 8) | b[0];
    else if (sizeBits === 1) target = ((low << 16) | (b[0] << 8) | b[1]) + 2048;
    else if (sizeBits === 2) target = ((low << 24) | (b[0] << 16) | (b[1] << 8) | b[2]) + 526_336;
    else target = b.readUInt32BE(0);
    return { target: this.base + target, next: offset + sizeBits + 1 };
  }

  private unsigned(offset: number, size: number): number {
    if (size > 4) throw new MmdbFormatError('a 16- or 32-bit integer has at most 4 bytes');
    return size === 0 ? 0 : this.file.bytes(offset, size).readUIntBE(0, size);
  }

  /** uint64 and uint128: a number while it is exact, a bigint beyond. */
  private bigUnsigned(offset: number, size: number): number | bigint {
    if (size <= 6) return size === 0 ? 0 : this.file.bytes(offset, size).readUIntBE(0, size);
    let value = 0n;
    for (const byte of this.file.bytes(offset, size)) value = (value << 8n) | BigInt(byte);
    return value;
  }
}

function readMetadata(file: PagedFile): Metadata {
  const from = Math.max(0, file.size - METADATA_MAX_BYTES);
  const tail = file.bytes(from, file.size - from);
  const at = tail.lastIndexOf(METADATA_MARKER);
  if (at < 0) throw new MmdbFormatError('not a MaxMind DB file (no metadata marker)');
  const { value } = new Decoder(file, 0).value(from + at + METADATA_MARKER.length);
  const map = value as Record<string, unknown>;
  const nodeCount = Number(map.node_count);
  const recordSize = Number(map.record_size);
  const ipVersion = Number(map.ip_version);
  if (Number(map.binary_format_major_version) !== 2) throw new MmdbFormatError('only MaxMind DB format 2 is read');
  if (!Number.isInteger(nodeCount) || nodeCount <= 0) throw new MmdbFormatError('bad node_count');
  if (recordSize !== 24 && recordSize !== 28 && recordSize !== 32) throw new MmdbFormatError(`unsupported record_size ${recordSize}`);
  if (ipVersion !== 4 && ipVersion !== 6) throw new MmdbFormatError(`unsupported ip_version ${ipVersion}`);
  return { nodeCount, recordSize, ipVersion };
}
