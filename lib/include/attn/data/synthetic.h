#pragma once
/// Generators of the data sets of seeds 001 and 002 (`attn datagen features|dates`). The same
/// options give the same bytes with the same build (the standard library's distributions and
/// ICU's CLDR data may differ elsewhere).
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace attn::data {

/// Seed 001's task: D standard-normal features x0..x{D-1} and a 0/1 label; the informative
/// features carry the label as a shift, x_i = s (2y - 1) + N(0, 1), with s chosen so that the
/// best possible accuracy is `bayes_accuracy` (noise keeps it near the seed's 0.92); the others
/// are pure noise.
struct FeatureCorpusOptions {
  std::int64_t rows = 100000;
  std::int64_t dims = 10;
  std::vector<std::int64_t> informative = {1, 2};  ///< 0-based: feature xI
  std::uint64_t seed = 1;
  double bayes_accuracy = 0.92;
};
/// Header: x0,...,x{D-1},label. Throws std::invalid_argument for an informative index outside
/// [0, dims) or an accuracy outside (0.5, 1).
void write_feature_corpus(std::ostream& out, const FeatureCorpusOptions& options);

/// Seed 002's task (after datalogue/keras-attention): random dates rendered human-readable in
/// random formats and case, with their ISO 8601 form. Formats: the locale's CLDR short, medium,
/// long and full date styles, and the patterns 'd MMM y', 'd MMMM y', 'dd MMM y', 'd MMM, y',
/// 'd MMMM, y', 'dd, MMM y', 'd MM yy', 'MMMM d y', 'MMMM d, y', 'dd.MM.yy', rendered by ICU in
/// each locale. Dates are uniform in [from_year-01-01, to_year-12-31]; the default century
/// 1950-2049 keeps two-digit years unambiguous (50-99: 19xx, 00-49: 20xx). Always the Gregorian
/// calendar, whatever the locale's default; years from 1583.
struct DateCorpusOptions {
  std::int64_t rows = 10000;
  std::uint64_t seed = 1;
  std::vector<std::string> locales = {"en_US"};
  int from_year = 1950, to_year = 2049;
};
/// Header: human,machine. Throws std::invalid_argument for an unknown locale or a bad year range.
void write_date_corpus(std::ostream& out, const DateCorpusOptions& options);

/// `attn datagen KIND`: one of the generators, by name.
struct GenerateRequest {
  std::string kind;  ///< toxic, civil, documents, spans, features or dates
  std::int64_t rows = 20000;
  std::uint64_t seed = 1;
  std::int64_t dims = 10;                ///< features
  std::string informative = "1,2";       ///< features: 0-based indices, comma-separated
  double accuracy = 0.92;                ///< features
  std::string locales = "en_US";         ///< dates: comma-separated ICU locales
  int from_year = 1950, to_year = 2049;  ///< dates
};
/// The CSV; bad settings throw std::invalid_argument.
std::string generate(const GenerateRequest& request);

}  // namespace attn::data
