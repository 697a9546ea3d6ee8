// Writes a Kaggle-Jigsaw-layout CSV whose text has the real train.csv's profile, for benchmarks:
// 160,000 comments by default, lengths log-normal with median ~36 and mean ~68 words (capped at
// 1,400), Zipf-distributed words (~200k distinct), capitalised words, punctuation, CRLF line breaks
// inside quoted comments, and ~2% non-ASCII words (accents, Greek, emoji).
//
// usage: gen_jigsaw_profile OUT.csv [ROWS] [SEED]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace {

/// A pronounceable word for a Zipf rank (distinct ranks give distinct words).
std::string word_for_rank(std::uint32_t rank) {
  // Three letters a syllable: frequent words get 3 letters, the tail 6 to 12, so comments average
  // ~395 characters as in train.csv (68 MB for 159,571 rows).
  static const char* kSyllables[] = {"kar", "ton", "rin", "nel", "sut", "mog", "lap", "pir", "dex", "vol", "xen", "gud",
                                     "bam", "fis", "hod", "jul", "cor", "tyn", "wes", "zik", "sha", "que", "ant", "elm"};
  std::string w;
  std::uint32_t r = rank;
  do {
    w += kSyllables[r % 24];
    r /= 24;
  } while (r > 0);
  return w;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') {  // --help is not a file name
    std::fprintf(stderr, "usage: %s OUT.csv [ROWS] [SEED]\n", argv[0]);
    return 2;
  }
  const long rows = argc > 2 ? std::atol(argv[2]) : 160000;
  const unsigned seed = argc > 3 ? static_cast<unsigned>(std::atol(argv[3])) : 2018;
  std::mt19937_64 rng(seed);

  // Zipf(1.3) over 1M word types: ~210k of them appear in ~11M tokens, and the 20k most frequent
  // cover ~97% of the tokens, as in train.csv.
  const std::size_t kTypes = 1000000;
  std::vector<double> cdf(kTypes);
  double total = 0;
  for (std::size_t i = 0; i < kTypes; ++i) cdf[i] = (total += 1.0 / std::pow(static_cast<double>(i + 1), 1.3));
  std::uniform_real_distribution<double> uni(0.0, total);
  std::uniform_real_distribution<double> coin(0.0, 1.0);
  std::lognormal_distribution<double> length(std::log(36.0), 1.128);
  const char* kNonAscii[] = {"café", "über", "naïve", "ΑΘΗΝΑ", "μῆνιν", "😀", "中文", "İstanbul", "ÇA", "—"};
  const char* kPunct[] = {",", ".", "!", "?", "...", ":", "\"", "(", ")"};

  std::FILE* out = std::fopen(argv[1], "wb");
  if (!out) {
    std::perror(argv[1]);
    return 1;
  }
  std::fputs("\"id\",\"comment_text\",\"toxic\",\"severe_toxic\",\"obscene\",\"threat\",\"insult\",\"identity_hate\"\n", out);
  std::string text;
  for (long row = 0; row < rows; ++row) {
    const long n = std::clamp(std::lround(length(rng)), 1L, 1400L);
    text.clear();
    for (long k = 0; k < n; ++k) {
      if (k) text += coin(rng) < 0.02 ? "\r\n" : " ";
      std::string w;
      if (coin(rng) < 0.02) {
        w = kNonAscii[rng() % 10];
      } else {
        const auto rank = static_cast<std::uint32_t>(std::lower_bound(cdf.begin(), cdf.end(), uni(rng)) - cdf.begin());
        w = word_for_rank(rank);
        if (coin(rng) < 0.08) w[0] = static_cast<char>(w[0] - 32);
      }
      text += w;
      if (coin(rng) < 0.07) text += kPunct[rng() % 9];
    }
    std::string quoted = "\"";
    for (char c : text) {
      if (c == '"') quoted += '"';
      quoted += c;
    }
    quoted += '"';
    const int toxic = coin(rng) < 0.096;
    const int severe = toxic && coin(rng) < 0.1;
    std::fprintf(out, "\"%016lx\",%s,%d,%d,%d,%d,%d,%d\n", static_cast<unsigned long>(rng()), quoted.c_str(), toxic, severe,
                 toxic && coin(rng) < 0.5, toxic && coin(rng) < 0.03, toxic && coin(rng) < 0.5, toxic && coin(rng) < 0.09);
  }
  return std::fclose(out) == 0 ? 0 : 1;
}
