// data.pt reading on arbitrary bytes: the prepared data or a clean error naming the file.
#include "attn/io/prepared_data_reader.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    attn::io::read_prepared(fuzz::as_file(data, size, ".pt"));
  } catch (const std::exception&) {
  }
  return 0;
}
