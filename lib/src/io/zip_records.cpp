// ZIP's layout (PKWARE's APPNOTE.TXT): the end-of-central-directory record (EOCD) at the end of the
// file locates the central directory, one entry per record with its CRC-32, sizes and the offset of
// its local header, after which the record's bytes follow. ZIP64 moves sizes and offsets that do
// not fit 32 bits into a ZIP64 EOCD and per-entry "extra" fields.
#include "attn/io/zip_records.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <vector>

#include <zlib.h>

#include "attn/io/checksum.h"

namespace attn::io {

namespace {

constexpr std::uint32_t kEocd = 0x06054b50, kZip64Locator = 0x07064b50, kZip64Eocd = 0x06064b50, kCentral = 0x02014b50, kLocal = 0x04034b50;
constexpr std::uint32_t kNone32 = 0xFFFFFFFF;

std::uint64_t le(const char* p, int bytes) {
  std::uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

struct Reader {
  const ReadAt& read;
  std::uint64_t size;
  const std::string& what;

  [[noreturn]] void fail(const std::string& why) const { throw std::runtime_error(what + ": " + why); }
  [[noreturn]] void not_zip(const std::string& why) const { throw NotZipArchive(what, why); }

  std::string bytes(std::uint64_t offset, std::uint64_t n, const std::string& context) const {
    if (offset > size || n > size - offset) fail(context + " lies outside the file: the file is truncated or corrupt");
    std::string out(n, '\0');
    if (read(offset, out.data(), n) != n) fail(context + ": cannot read");
    return out;
  }
};

/// Where the central directory is and how many entries it has.
struct Directory {
  std::uint64_t entries, size, offset;
};

/// Finds the central directory from the end-of-central-directory record and the ZIP64 one it points to, if any.
Directory find_directory(const Reader& r) {
  // The EOCD: 22 bytes plus a comment of up to 65535, so within the file's last 65557 bytes.
  const std::uint64_t tail_size = std::min<std::uint64_t>(r.size, 22 + 65535);
  const std::string tail = r.bytes(r.size - tail_size, tail_size, "the end of the file");
  std::uint64_t eocd = std::string::npos;
  for (std::uint64_t i = tail_size >= 22 ? tail_size - 22 + 1 : 0; i-- > 0;)
    if (le(tail.data() + i, 4) == kEocd) {
      eocd = i;
      break;
    }
  if (eocd == std::string::npos) r.not_zip("no end-of-central-directory record");
  const char* e = tail.data() + eocd;
  const Directory plain{le(e + 10, 2), le(e + 12, 4), le(e + 16, 4)};
  const bool marks = plain.entries == 0xFFFF || plain.size == kNone32 || plain.offset == kNone32;  // "see the ZIP64 record"
  // The directory's entries are counted twice (this disk's and the total); miniz refuses them apart.
  const auto agree = [&](std::uint64_t on_disk, std::uint64_t total) {
    if (on_disk != total)
      r.fail("the end-of-central-directory record is corrupt (" + std::to_string(on_disk) + " and " + std::to_string(total) + " entries)");
  };
  // A ZIP64 locator just before the EOCD: LibTorch writes one in every file, and its reader (miniz)
  // then takes the ZIP64 record's values whatever the EOCD says, so they are the ones checked.
  const std::uint64_t at = r.size - tail_size + eocd;
  const std::string locator = at >= 20 ? r.bytes(at - 20, 20, "the ZIP64 locator") : std::string();
  if (locator.empty() || le(locator.data(), 4) != kZip64Locator) {
    if (marks) r.not_zip("no ZIP64 locator");
    agree(le(e + 8, 2), plain.entries);
    return plain;
  }
  const std::string z = r.bytes(le(locator.data() + 8, 8), 56, "the ZIP64 end of central directory");
  if (le(z.data(), 4) != kZip64Eocd) r.not_zip("bad ZIP64 end of central directory");
  const Directory d{le(z.data() + 32, 8), le(z.data() + 40, 8), le(z.data() + 48, 8)};
  agree(le(z.data() + 24, 8), d.entries);
  return d;
}

/// A central directory entry: a record's name, compression method, CRC-32, sizes and the offset of its local header.
struct Entry {
  std::string name;
  std::uint64_t method;
  std::uint32_t crc;
  std::uint64_t stored_size, plain_size, local;
};

/// Replaces the entry's sizes and offset that are 0xFFFFFFFF by their 64-bit values in its ZIP64 extra field, c[begin, end).
void read_zip64_extra(const Reader& r, const char* c, std::uint64_t begin, std::uint64_t end, Entry& entry) {
  // ZIP64: the 64-bit values of the fields set to 0xFFFFFFFF, in this order.
  for (std::uint64_t x = begin; x + 4 <= end;) {
    const std::uint64_t id = le(c + x, 2), length = le(c + x + 2, 2);
    if (x + 4 + length > end) break;
    if (id == 1) {
      std::uint64_t f = x + 4;
      for (std::uint64_t* field : {&entry.plain_size, &entry.stored_size, &entry.local}) {
        if (*field != kNone32) continue;
        if (f + 8 > x + 4 + length) r.fail("record '" + entry.name + "': corrupt ZIP64 sizes");
        *field = le(c + f, 8);
        f += 8;
      }
    }
    x += 4 + length;
  }
}

/// Reads central directory entry `i`, which starts at `pos` in `dir`, and moves `pos` past it.
Entry read_entry(const Reader& r, const std::string& dir, std::uint64_t i, std::uint64_t& pos) {
  if (pos + 46 > dir.size() || le(dir.data() + pos, 4) != kCentral) r.fail("central directory entry " + std::to_string(i) + " is corrupt");
  const char* c = dir.data() + pos;
  Entry entry{{}, le(c + 10, 2), static_cast<std::uint32_t>(le(c + 16, 4)), le(c + 20, 4), le(c + 24, 4), le(c + 42, 4)};
  const std::uint64_t name_length = le(c + 28, 2), extra_length = le(c + 30, 2), comment_length = le(c + 32, 2);
  if (pos + 46 + name_length + extra_length + comment_length > dir.size())
    r.fail("central directory entry " + std::to_string(i) + " is corrupt");
  entry.name.assign(c + 46, name_length);
  read_zip64_extra(r, c, 46 + name_length, 46 + name_length + extra_length, entry);
  pos += 46 + name_length + extra_length + comment_length;
  return entry;
}

/// The offset of the record's bytes, after its local header (checked to be one, and the bytes to lie within the file).
std::uint64_t record_start(const Reader& r, const Entry& entry) {
  const std::string header = r.bytes(entry.local, 30, "record '" + entry.name + "'");
  if (le(header.data(), 4) != kLocal) r.fail("record '" + entry.name + "' has no local header: the file is corrupt");
  const std::uint64_t at = entry.local + 30 + le(header.data() + 26, 2) + le(header.data() + 28, 2);
  if (at > r.size || entry.stored_size > r.size - at)
    r.fail("record '" + entry.name + "' lies outside the file: the file is truncated or corrupt");
  return at;
}

/// The CRC-32 of a stored record's bytes at `at`, read through `buffer`.
std::uint32_t stored_crc(const Reader& r, const Entry& entry, std::uint64_t at, std::vector<char>& buffer) {
  std::uint32_t sum = 0;
  for (std::uint64_t left = entry.stored_size; left > 0;) {
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(left, buffer.size()));
    if (r.read(at, buffer.data(), n) != n) r.fail("record '" + entry.name + "': cannot read");
    sum = crc32_update(sum, std::string_view(buffer.data(), n));
    at += n;
    left -= n;
  }
  return sum;
}

/// The CRC-32 of a deflated record's plain bytes (LibTorch compresses the code), inflating the bytes at `at`
/// (read through `buffer`) never past the size the entry states; fails with `corrupt` when they do not inflate to it.
std::uint32_t deflated_crc(const Reader& r, const Entry& entry, std::uint64_t at, std::vector<char>& buffer, const std::string& corrupt) {
  std::uint32_t sum = 0;
  z_stream z{};
  if (inflateInit2(&z, -MAX_WBITS) != Z_OK) r.fail("record '" + entry.name + "': cannot start zlib");
  std::vector<char> out(1 << 16);
  std::uint64_t left = entry.stored_size, produced = 0;
  int status = Z_OK;
  while (status != Z_STREAM_END) {
    if (z.avail_in == 0 && left > 0) {
      const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(left, buffer.size()));
      if (r.read(at, buffer.data(), n) != n) {
        inflateEnd(&z);
        r.fail("record '" + entry.name + "': cannot read");
      }
      z.next_in = reinterpret_cast<Bytef*>(buffer.data());
      z.avail_in = static_cast<uInt>(n);
      at += n;
      left -= n;
    }
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    status = inflate(&z, Z_NO_FLUSH);
    const std::size_t n = out.size() - z.avail_out;
    produced += n;
    sum = crc32_update(sum, std::string_view(out.data(), n));
    if ((status != Z_OK && status != Z_STREAM_END) || produced > entry.plain_size ||
        (status == Z_OK && n == 0 && z.avail_in == 0 && left == 0)) {
      inflateEnd(&z);
      r.fail(corrupt);
    }
  }
  inflateEnd(&z);
  if (produced != entry.plain_size) r.fail(corrupt);
  return sum;
}

/// Calls fn(entry, offset of its bytes) for each record `wanted` names (stored or deflated), once
/// its stated sizes are checked: its bytes lie within the file, a stored record's two sizes agree.
template <class Fn>
void each_record(const Reader& r, const std::function<bool(const std::string& name)>& wanted, Fn&& fn) {
  const Directory directory = find_directory(r);
  const std::string dir = r.bytes(directory.offset, directory.size, "the central directory");
  std::uint64_t pos = 0;
  for (std::uint64_t i = 0; i < directory.entries; ++i) {
    const Entry entry = read_entry(r, dir, i, pos);
    if (!wanted(entry.name)) continue;
    // LibTorch's reader allocates a record's stated size before it finds it cannot inflate it.
    if (entry.method != 0 && entry.method != 8)
      r.fail("record '" + entry.name + "' is compressed by method " + std::to_string(entry.method) +
             " (LibTorch reads stored and deflated records)");
    if (entry.method == 0 && entry.stored_size != entry.plain_size) r.fail("record '" + entry.name + "': corrupt sizes");
    fn(entry, record_start(r, entry));
  }
}

}  // namespace

std::map<std::string, std::uint64_t> check_zip_sizes(const ReadAt& read, std::uint64_t size, const std::string& what,
                                                     const std::function<bool(const std::string& name)>& wanted) {
  const Reader r{read, size, what};
  std::map<std::string, std::uint64_t> sizes;
  each_record(r, wanted, [&](const Entry& entry, std::uint64_t) {
    // DEFLATE expands at most 1032 to 1 (a run of one byte): a record stated larger is not its bytes.
    if (entry.method == 8 && entry.plain_size / 1032 > entry.stored_size + 1) r.fail("record '" + entry.name + "': corrupt sizes");
    sizes[entry.name] = entry.plain_size;
  });
  return sizes;
}

void check_zip_records(const ReadAt& read, std::uint64_t size, const std::string& what,
                       const std::function<bool(const std::string& name)>& wanted) {
  const Reader r{read, size, what};
  std::vector<char> buffer(1 << 20);
  each_record(r, wanted, [&](const Entry& entry, std::uint64_t at) {
    const std::string corrupt = "record '" + entry.name + "' does not match its CRC-32: the file is corrupt";
    const std::uint32_t sum = entry.method == 0 ? stored_crc(r, entry, at, buffer) : deflated_crc(r, entry, at, buffer, corrupt);
    if (sum != entry.crc) r.fail(corrupt);
  });
}

}  // namespace attn::io
