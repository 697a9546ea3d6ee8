#include "attn/data/synthetic.h"
#include "synthetic_formats.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <sstream>
#include <stdexcept>

#include <unicode/datefmt.h>
#include <unicode/gregocal.h>
#include <unicode/locid.h>
#include <unicode/smpdtfmt.h>
#include <unicode/timezone.h>
#include <unicode/unistr.h>

#include "attn/data/inputs.h"
#include "attn/data/toxic_corpus.h"

#include "attn/text/csv.h"

namespace attn::data {

// ---- Seed 001: features -------------------------------------------------------------------

namespace {

/// z with Phi(z) = p (bisection on the normal CDF).
double normal_quantile(double p) {
  double lo = -10, hi = 10;
  for (int i = 0; i < 200; ++i) {
    const double mid = (lo + hi) / 2;
    (0.5 * std::erfc(-mid / std::sqrt(2.0)) < p ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

}  // namespace

void write_feature_corpus(std::ostream& out, const FeatureCorpusOptions& o) {
  if (o.dims < 1) throw std::invalid_argument("dims must be >= 1");
  if (o.informative.empty()) throw std::invalid_argument("at least one informative feature is needed");
  if (!(o.bayes_accuracy > 0.5 && o.bayes_accuracy < 1)) throw std::invalid_argument("bayes_accuracy must be in (0.5, 1)");
  std::vector<bool> informative(static_cast<std::size_t>(o.dims), false);
  for (std::int64_t i : o.informative) {
    if (i < 0 || i >= o.dims)
      throw std::invalid_argument("informative feature " + std::to_string(i) + " is not in 0.." + std::to_string(o.dims - 1));
    informative[static_cast<std::size_t>(i)] = true;
  }
  std::int64_t k = 0;
  for (bool b : informative) k += b ? 1 : 0;
  // With k features each shifted by +-s, the optimal rule's accuracy is Phi(s sqrt(k)).
  const double shift = normal_quantile(o.bayes_accuracy) / std::sqrt(static_cast<double>(k));
  std::mt19937_64 rng(o.seed);
  std::normal_distribution<double> noise(0.0, 1.0);
  std::bernoulli_distribution coin(0.5);
  for (std::int64_t d = 0; d < o.dims; ++d) out << 'x' << d << ',';
  out << "label\n";
  char buf[32];
  for (std::int64_t r = 0; r < o.rows; ++r) {
    const int y = coin(rng) ? 1 : 0;
    for (std::int64_t d = 0; d < o.dims; ++d) {
      const double v = noise(rng) + (informative[static_cast<std::size_t>(d)] ? shift * (2 * y - 1) : 0.0);
      std::snprintf(buf, sizeof buf, "%.5f,", v);
      out << buf;
    }
    out << y << '\n';
  }
}

// ---- Seed 002: dates ----------------------------------------------------------------------

namespace {

const char* const kPatterns[] = {"d MMM y",   "d MMMM y", "dd MMM y", "d MMM, y",  "d MMMM, y",
                                 "dd, MMM y", "d MM yy",  "MMMM d y", "MMMM d, y", "dd.MM.yy"};

/// Days since 1970-01-01 of a civil date, and back (proleptic Gregorian; H. Hinnant's algorithms).
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

void civil_from_days(std::int64_t z, int& y, int& m, int& d) {
  z += 719468;
  const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  d = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  m = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  y = static_cast<int>(static_cast<std::int64_t>(yoe) + era * 400 + (m <= 2));
}

struct LocaleFormats {
  icu::Locale locale;
  std::vector<std::unique_ptr<icu::DateFormat>> formats;
};

LocaleFormats formats_for(const std::string& name) {
  if (name.find('@') != std::string::npos) throw std::invalid_argument("locale '" + name + "': no keywords (@...), please");
  // Always the Gregorian calendar (a th_TH or fa_IR default calendar would render other years),
  // with the locale's language and formats.
  LocaleFormats lf{icu::Locale((name + "@calendar=gregorian").c_str()), {}};
  if (lf.locale.isBogus() || std::string(lf.locale.getLanguage()).empty()) throw std::invalid_argument("unknown locale '" + name + "'");
  // A locale ICU has no data for falls back to the root locale: refuse it rather than emit root formats.
  bool known = false;
  int32_t count = 0;
  const icu::Locale* available = icu::DateFormat::getAvailableLocales(count);
  for (int32_t i = 0; i < count && !known; ++i) known = std::string(available[i].getBaseName()) == lf.locale.getBaseName();
  if (!known) throw std::invalid_argument("locale '" + name + "' has no ICU date formats (e.g. en_US, fr_FR, de_DE)");
  const std::unique_ptr<icu::TimeZone> utc(icu::TimeZone::createTimeZone("UTC"));
  for (auto style : {icu::DateFormat::kShort, icu::DateFormat::kMedium, icu::DateFormat::kLong, icu::DateFormat::kFull})
    lf.formats.emplace_back(icu::DateFormat::createDateInstance(style, lf.locale));
  for (const char* p : kPatterns) {
    UErrorCode status = U_ZERO_ERROR;
    auto f = std::make_unique<icu::SimpleDateFormat>(icu::UnicodeString::fromUTF8(p), lf.locale, status);
    if (U_FAILURE(status)) throw std::runtime_error(std::string("ICU cannot build the date pattern '") + p + "'");
    lf.formats.push_back(std::move(f));
  }
  for (auto& f : lf.formats) {
    if (!f) throw std::runtime_error("ICU has no date formats for locale '" + name + "'");
    f->setTimeZone(*utc);
  }
  return lf;
}

}  // namespace

const std::vector<std::string>& date_format_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n = {"short", "medium", "long", "full"};
    for (const char* p : kPatterns) n.push_back(p);
    return n;
  }();
  return names;
}

void write_date_corpus(std::ostream& out, const DateCorpusOptions& o) {
  if (o.locales.empty()) throw std::invalid_argument("at least one locale is needed");
  // From 1583 on, every date is Gregorian (before the 1582 reform ICU would render Julian dates).
  if (o.from_year < 1583 || o.to_year > 9999 || o.from_year > o.to_year)
    throw std::invalid_argument("years must satisfy 1583 <= from <= to <= 9999");
  std::vector<LocaleFormats> locales;
  for (const std::string& l : o.locales) locales.push_back(formats_for(l));
  const std::int64_t first = days_from_civil(o.from_year, 1, 1), last = days_from_civil(o.to_year, 12, 31);
  std::mt19937_64 rng(o.seed);
  std::uniform_int_distribution<std::int64_t> day(first, last);
  std::uniform_int_distribution<std::size_t> pick_locale(0, locales.size() - 1), pick_format(0, locales[0].formats.size() - 1);
  std::uniform_int_distribution<int> pick_case(0, 2);
  out << "human,machine\n";
  for (std::int64_t r = 0; r < o.rows; ++r) {
    const std::int64_t z = day(rng);
    int y = 0, m = 0, d = 0;
    civil_from_days(z, y, m, d);
    const LocaleFormats& lf = locales[pick_locale(rng)];
    icu::UnicodeString text;
    lf.formats[pick_format(rng)]->format(static_cast<UDate>(z) * 86400000.0, text);
    switch (pick_case(rng)) {  // as rendered, lower case, upper case
      case 1:
        text.toLower(lf.locale);
        break;
      case 2:
        text.toUpper(lf.locale);
        break;
      default:
        break;
    }
    std::string human;
    text.toUTF8String(human);
    char iso[40];  // room for any three ints, so that the compiler can see nothing is cut
    std::snprintf(iso, sizeof iso, "%04d-%02d-%02d", y, m, d);
    out << text::csv_quote(human) << ',' << iso << '\n';
  }
}

namespace {

/// A kind's options with the request's rows and seed, the rest the kind's defaults.
template <class Options>
Options sized(const GenerateRequest& r) {
  Options o;
  o.rows = r.rows;
  o.seed = r.seed;
  return o;
}

}  // namespace

std::string generate(const GenerateRequest& r) {
  if (r.rows < 1) throw std::invalid_argument("--rows must be >= 1");
  std::ostringstream csv;
  if (r.kind == "toxic") {
    write_toxic_corpus(csv, sized<ToxicCorpusOptions>(r));
  } else if (r.kind == "civil") {
    write_civil_corpus(csv, sized<CivilCorpusOptions>(r));
  } else if (r.kind == "documents") {
    write_document_corpus(csv, sized<DocumentCorpusOptions>(r));
  } else if (r.kind == "spans") {
    write_spans_corpus(csv, sized<SpansCorpusOptions>(r));
  } else if (r.kind == "features") {
    FeatureCorpusOptions o = sized<FeatureCorpusOptions>(r);
    o.dims = r.dims;
    o.bayes_accuracy = r.accuracy;
    o.informative.clear();
    for (const std::string& s : split_list(r.informative)) {
      char* end = nullptr;
      const long long v = std::strtoll(s.c_str(), &end, 10);
      if (s.empty() || *end != '\0' || v < 0) throw std::invalid_argument("--informative: '" + s + "' is not a feature index");
      o.informative.push_back(v);
    }
    write_feature_corpus(csv, o);
  } else if (r.kind == "dates") {
    DateCorpusOptions o = sized<DateCorpusOptions>(r);
    o.locales = split_list(r.locales);
    o.from_year = r.from_year;
    o.to_year = r.to_year;
    write_date_corpus(csv, o);
  } else {
    throw std::invalid_argument("unknown data set kind '" + r.kind + "' (kinds: toxic, civil, documents, spans, features, dates)");
  }
  return csv.str();
}

}  // namespace attn::data
