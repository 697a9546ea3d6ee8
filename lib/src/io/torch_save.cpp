#include "attn/io/torch_save.h"
#include "attn/text/threads.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <stdexcept>

#include <zlib.h>

namespace attn::io {
namespace {

// ---- pickle (protocol 2) --------------------------------------------------------------------

class PickleWriter {
 public:
  std::string bytes;

  void proto() { bytes += "\x80\x02"; }
  void stop() { bytes += '.'; }
  void mark() { bytes += '('; }
  void tuple() { bytes += 't'; }
  void empty_tuple() { bytes += ')'; }
  void reduce() { bytes += 'R'; }
  void boolean(bool b) { bytes += b ? '\x88' : '\x89'; }
  void global(const char* module, const char* name) {
    bytes += 'c';
    bytes += module;
    bytes += '\n';
    bytes += name;
    bytes += '\n';
  }
  void str(const std::string& s) {  // BINUNICODE
    bytes += 'X';
    u32(static_cast<std::uint32_t>(s.size()));
    bytes += s;
  }
  void integer(std::int64_t v) {
    if (v >= INT32_MIN && v <= INT32_MAX) {  // BININT
      bytes += 'J';
      u32(static_cast<std::uint32_t>(static_cast<std::int32_t>(v)));
    } else {  // LONG1, 8 bytes little-endian two's complement
      bytes += '\x8a';
      bytes += '\x08';
      for (int i = 0; i < 8; ++i) bytes += static_cast<char>((static_cast<std::uint64_t>(v) >> (8 * i)) & 0xFF);
    }
  }
  void int_tuple(const std::vector<std::int64_t>& v) {
    if (v.empty()) return empty_tuple();
    mark();
    for (std::int64_t x : v) integer(x);
    tuple();
  }
  void string_list(const std::vector<std::string>& v) {
    bytes += ']';  // EMPTY_LIST
    if (v.empty()) return;
    mark();
    for (const std::string& s : v) str(s);
    bytes += 'e';  // APPENDS
  }

 private:
  void u32(std::uint32_t v) {
    for (int i = 0; i < 4; ++i) bytes += static_cast<char>((v >> (8 * i)) & 0xFF);
  }
};

struct Storage {
  std::string key;
  const void* data;
  std::size_t size;
  TensorView::Rows rows;  // instead of data: how to produce its rows
  std::size_t row_bytes;  // bytes of one row (the whole tensor for a scalar)
};

std::size_t element_size(TensorView::DType t) { return t == TensorView::DType::kInt64 ? 8 : 4; }

const char* storage_class(TensorView::DType t) {
  switch (t) {
    case TensorView::DType::kInt32:
      return "IntStorage";
    case TensorView::DType::kInt64:
      return "LongStorage";
    case TensorView::DType::kFloat32:
      return "FloatStorage";
  }
  return "";
}

void pickle_tensor(PickleWriter& p, const TensorView& t, std::vector<Storage>& storages) {
  std::int64_t numel = 1;
  for (std::int64_t d : t.shape) numel *= d;
  std::vector<std::int64_t> stride(t.shape.size());
  std::int64_t s = 1;
  for (std::size_t i = t.shape.size(); i-- > 0;) {
    stride[i] = s;
    s *= t.shape[i];
  }
  const std::string key = std::to_string(storages.size());
  const std::size_t bytes = static_cast<std::size_t>(numel) * element_size(t.dtype);
  const std::int64_t rows = t.shape.empty() ? 1 : t.shape[0];
  storages.push_back({key, t.data, bytes, t.rows, rows > 0 ? bytes / static_cast<std::size_t>(rows) : bytes});

  p.global("torch._utils", "_rebuild_tensor_v2");
  p.mark();
  p.mark();  // persistent id of the storage
  p.str("storage");
  p.global("torch", storage_class(t.dtype));
  p.str(key);
  p.str("cpu");
  p.integer(numel);
  p.tuple();
  p.bytes += 'Q';  // BINPERSID
  p.integer(0);    // storage offset
  p.int_tuple(t.shape);
  p.int_tuple(stride);
  p.boolean(false);  // requires_grad
  p.global("collections", "OrderedDict");
  p.empty_tuple();
  p.reduce();  // backward hooks: OrderedDict()
  p.tuple();
  p.reduce();
}

// ---- zip (stored entries, data aligned to 64 bytes as PyTorchStreamWriter does) -------------

class ZipWriter {
 public:
  ZipWriter(const std::string& path) : path_(path), file_(std::fopen(path.c_str(), "wb"), &std::fclose) {
    if (!file_) throw std::runtime_error(path + ": cannot write: " + std::strerror(errno));
  }

  void add(const std::string& name, const void* data, std::size_t size) {
    const std::uint32_t crc = static_cast<std::uint32_t>(crc32_z(0L, static_cast<const Bytef*>(data), size));
    header(name, size, crc);
    write(data, size);
  }

  /// An entry of `count` chunks: chunk_at(i, buffer) returns chunk i's `size_of(i)` bytes (in
  /// `buffer`, of max_chunk bytes, or elsewhere). `threads` threads take chunks in turn: each makes
  /// its chunk and its CRC-32, then waits for the chunks before it to be written and writes it.
  /// The local header's CRC is filled in afterwards.
  template <class SizeOf, class ChunkAt>
  void add_chunked(const std::string& name, std::size_t size, std::size_t count, std::size_t max_chunk, int threads, SizeOf&& size_of,
                   ChunkAt&& chunk_at) {
    const std::uint64_t crc_at = offset_ + 14;  // the CRC field of the local header
    header(name, size, 0);
    std::mutex mutex;
    std::condition_variable turn;
    std::size_t next = 0;  // the chunk to write next
    uLong crc = crc32_z(0L, Z_NULL, 0);
    std::exception_ptr error;
    const std::size_t workers = std::max<std::size_t>(1, std::min<std::size_t>(static_cast<std::size_t>(threads), count));
    auto work = [&](std::size_t w) {
      try {
        std::vector<unsigned char> buffer(max_chunk);
        for (std::size_t i = w; i < count; i += workers) {
          const std::size_t n = size_of(i);
          const void* bytes = chunk_at(i, buffer.data());
          const uLong chunk_crc = crc32_z(0L, static_cast<const Bytef*>(bytes), n);
          std::unique_lock<std::mutex> lock(mutex);
          turn.wait(lock, [&] { return next == i || error; });
          if (error) return;
          write(bytes, n);
          crc = crc32_combine(crc, chunk_crc, static_cast<z_off_t>(n));
          ++next;
          turn.notify_all();
        }
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex);
        if (!error) error = std::current_exception();
        turn.notify_all();
      }
    };
    text::on_threads(workers, work);
    if (error) std::rethrow_exception(error);
    entries_.back().crc = static_cast<std::uint32_t>(crc);
    std::string field;
    put32(field, static_cast<std::uint32_t>(crc));
    if (std::fflush(file_.get()) != 0 || ::pwrite(::fileno(file_.get()), field.data(), 4, static_cast<off_t>(crc_at)) != 4)
      throw std::runtime_error(path_ + ": write failed: " + std::strerror(errno));
  }

 private:
  void header(const std::string& name, std::size_t size, std::uint32_t crc) {
    check_32bit(size);
    check_32bit(offset_);
    const std::size_t header = 30 + name.size();
    std::size_t pad = (64 - (offset_ + header + 4) % 64) % 64;  // 4 = extra field header
    std::string h;
    put32(h, 0x04034b50);
    put16(h, 20);    // version needed
    put16(h, 0);     // flags
    put16(h, 0);     // stored
    put16(h, 0);     // time
    put16(h, 0x21);  // date 1980-01-01
    put32(h, crc);
    put32(h, static_cast<std::uint32_t>(size));
    put32(h, static_cast<std::uint32_t>(size));
    put16(h, static_cast<std::uint16_t>(name.size()));
    put16(h, static_cast<std::uint16_t>(pad + 4));
    h += name;
    put16(h, 0x4246);  // "FB": padding field, as torch writes
    put16(h, static_cast<std::uint16_t>(pad));
    h.append(pad, 'Z');
    entries_.push_back({name, crc, size, offset_});
    write(h.data(), h.size());
  }

 public:
  void finish() {
    const std::uint64_t cd_start = offset_;
    for (const Entry& e : entries_) {
      std::string c;
      put32(c, 0x02014b50);
      put16(c, 20);  // made by
      put16(c, 20);  // needed
      put16(c, 0);
      put16(c, 0);
      put16(c, 0);
      put16(c, 0x21);
      put32(c, e.crc);
      put32(c, static_cast<std::uint32_t>(e.size));
      put32(c, static_cast<std::uint32_t>(e.size));
      put16(c, static_cast<std::uint16_t>(e.name.size()));
      put16(c, 0);  // extra
      put16(c, 0);  // comment
      put16(c, 0);  // disk
      put16(c, 0);  // internal attributes
      put32(c, 0);  // external attributes
      put32(c, static_cast<std::uint32_t>(e.offset));
      c += e.name;
      write(c.data(), c.size());
    }
    check_32bit(offset_);
    std::string end;
    put32(end, 0x06054b50);
    put16(end, 0);
    put16(end, 0);
    put16(end, static_cast<std::uint16_t>(entries_.size()));
    put16(end, static_cast<std::uint16_t>(entries_.size()));
    put32(end, static_cast<std::uint32_t>(offset_ - cd_start));
    put32(end, static_cast<std::uint32_t>(cd_start));
    put16(end, 0);
    write(end.data(), end.size());
    if (std::fclose(file_.release()) != 0) throw std::runtime_error(path_ + ": write failed (disk full?)");
  }

 private:
  struct Entry {
    std::string name;
    std::uint32_t crc;
    std::uint64_t size, offset;
  };
  static void put16(std::string& s, std::uint16_t v) {
    s += static_cast<char>(v & 0xFF);
    s += static_cast<char>(v >> 8);
  }
  static void put32(std::string& s, std::uint32_t v) {
    for (int i = 0; i < 4; ++i) s += static_cast<char>((v >> (8 * i)) & 0xFF);
  }
  void check_32bit(std::uint64_t v) const {
    if (v >= 0xFFFFFFFFULL) throw std::runtime_error(path_ + ": archive would exceed 4 GiB (not supported)");
  }
  void write(const void* data, std::size_t n) {
    if (n && std::fwrite(data, 1, n, file_.get()) != n) throw std::runtime_error(path_ + ": write failed (disk full?)");
    offset_ += n;
  }

  std::string path_;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file_;
  std::uint64_t offset_ = 0;
  std::vector<Entry> entries_;
};

}  // namespace

void write_torch_dict(const std::string& path, const std::vector<std::pair<std::string, TorchSaveValue>>& entries, int threads) {
  PickleWriter p;
  std::vector<Storage> storages;
  p.proto();
  p.bytes += '}';  // EMPTY_DICT
  if (!entries.empty()) {
    p.mark();
    for (const auto& [key, value] : entries) {
      p.str(key);
      if (const auto* s = std::get_if<std::string>(&value))
        p.str(*s);
      else if (const auto* t = std::get_if<TensorView>(&value))
        pickle_tensor(p, *t, storages);
      else
        p.string_list(std::get<std::vector<std::string>>(value));
    }
    p.bytes += 'u';  // SETITEMS
  }
  p.stop();

  ZipWriter zip(path);
  zip.add("archive/data.pkl", p.bytes.data(), p.bytes.size());
  constexpr std::size_t kChunk = 1 << 20;  // about 1 MB a chunk: a thread's buffer stays in its cache
  for (const Storage& s : storages) {
    const std::string name = "archive/data/" + s.key;
    if (!s.rows && (threads <= 1 || s.size <= kChunk)) {
      zip.add(name, s.data, s.size);
      continue;
    }
    // Whole rows a chunk; a row longer than kChunk is a chunk of its own.
    const std::size_t row_bytes = std::max<std::size_t>(1, s.row_bytes);
    const std::size_t rows_per_chunk = std::max<std::size_t>(1, kChunk / row_bytes), chunk = rows_per_chunk * row_bytes;
    const std::size_t count = s.size == 0 ? 0 : (s.size + chunk - 1) / chunk;
    zip.add_chunked(
        name, s.size, count, chunk, threads, [&](std::size_t i) { return std::min(chunk, s.size - i * chunk); },
        [&](std::size_t i, unsigned char* buffer) -> const void* {
          if (!s.rows) return static_cast<const unsigned char*>(s.data) + i * chunk;
          const std::size_t first = i * rows_per_chunk;
          s.rows(static_cast<std::int64_t>(first), static_cast<std::int64_t>(std::min(chunk, s.size - i * chunk) / row_bytes), buffer);
          return buffer;
        });
  }
  zip.add("archive/version", "3\n", 2);
  zip.finish();
}

}  // namespace attn::io
