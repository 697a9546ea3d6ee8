#include "attn/data/toxic_corpus.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "attn/text/csv.h"
#include "attn/text/sentences.h"

namespace attn::data {
namespace {

// Everyday Wikipedia-talk vocabulary, most frequent first (drawn Zipf-like).
const char* kCommon[] = {
    "the",        "to",         "of",          "and",       "a",       "i",        "you",       "is",        "that",     "in",
    "it",         "for",        "this",        "not",       "on",      "be",       "as",        "have",      "are",      "your",
    "with",       "if",         "article",     "was",       "page",    "or",       "but",       "wikipedia", "an",       "my",
    "by",         "from",       "at",          "please",    "about",   "can",      "talk",      "so",        "what",     "there",
    "all",        "me",         "would",       "will",      "no",      "they",     "one",       "do",        "should",   "edit",
    "which",      "has",        "just",        "been",      "any",     "like",     "more",      "also",      "other",    "some",
    "think",      "know",       "here",        "see",       "because", "source",   "people",    "only",      "how",      "he",
    "thanks",     "time",       "discussion",  "section",   "edits",   "why",      "who",       "now",       "deletion", "use",
    "sources",    "make",       "information", "may",       "even",    "user",     "am",        "thank",     "could",    "it's",
    "list",       "did",        "first",       "new",       "image",   "does",     "good",      "well",      "help",     "i'm",
    "see",        "name",       "added",       "reference", "history", "point",    "work",      "block",     "articles", "link",
    "fact",       "editors",    "policy",      "content",   "deleted", "question", "free",      "need",      "added",    "removed",
    "comment",    "better",     "since",       "way",       "really",  "read",     "those",     "still",     "editing",  "notable",
    "agree",      "citation",   "reason",      "template",  "change",  "revert",   "consensus", "neutral",   "review",   "years",
    "book",       "page's",     "title",       "war",       "city",    "school",   "music",     "album",     "film",     "team",
    "season",     "government", "history",     "language",  "town",    "ice",      "cream",     "food",      "summer",   "weather",
    "coffee",     "recipe",     "cake",        "chocolate", "holiday", "family",   "world",     "president", "river",    "church",
    "university", "county",     "station",     "game",      "series",  "café",     "naïve",     "über",      "résumé",   "—",
    "…",          "don’t",      "“quote”",     "😀",         "🙂",    "İstanbul", "ΣΟΦΙΑ",     "Москва",    "東京"};

// Words that make a comment toxic, and the labels each one carries besides toxic.
struct Trigger {
  const char* word;
  bool obscene, threat, insult, identity;
};
const Trigger kTriggers[] = {
    {"stupid", false, false, true, false},     {"idiot", false, false, true, false},    {"moron", false, false, true, false},
    {"loser", false, false, true, false},      {"pathetic", false, false, true, false}, {"sucks", true, false, false, false},
    {"worthless", false, false, true, false},  {"crap", true, false, false, false},     {"damn", true, false, false, false},
    {"garbage", true, false, false, false},    {"dumb", false, false, true, false},     {"fool", false, false, true, false},
    {"disgusting", false, false, true, false}, {"hate", false, false, false, false},    {"shut", false, false, false, false},
    {"ugly", false, false, true, false},
};
const char* kThreat[] = {"i will hurt you", "i will find you", "you will regret this", "watch your back", "i am going to destroy you"};
const char* kIdentity[] = {"foreigners", "outsiders", "those immigrants", "their religion", "those people"};
const char* kIntensifiers[] = {"totally", "absolutely", "so", "really", "extremely"};
const char* kPunctuation[] = {",", "!", "!!", ".", "?"};

/// Draws word ranks 0..n-1 with Zipf's law: rank i weighs 1 / (i + 1)^exponent.
std::discrete_distribution<std::size_t> zipf(std::size_t n, double exponent) {
  std::vector<double> weights(n);
  for (std::size_t i = 0; i < n; ++i) weights[i] = 1.0 / std::pow(static_cast<double>(i + 1), exponent);
  return std::discrete_distribution<std::size_t>(weights.begin(), weights.end());
}

}  // namespace

void write_toxic_corpus(std::ostream& out, const ToxicCorpusOptions& o) {
  std::mt19937_64 rng(o.seed);
  std::uniform_real_distribution<double> coin(0.0, 1.0);
  std::lognormal_distribution<double> length(std::log(30.0), 0.9);
  std::discrete_distribution<std::size_t> common = zipf(sizeof kCommon / sizeof *kCommon, 0.9);
  auto pick = [&](auto& array) { return array[rng() % (sizeof array / sizeof *array)]; };

  out << "\"id\",\"comment_text\",\"toxic\",\"severe_toxic\",\"obscene\",\"threat\",\"insult\",\"identity_hate\"\n";
  for (std::int64_t row = 0; row < o.rows; ++row) {
    // Labels first, at roughly Jigsaw's rates (threat and identity hate boosted a little so that a
    // 20k-row corpus has enough of them to learn from), then words that express them.
    int toxic = coin(rng) < 0.10, severe = 0, obscene = 0, threat = 0, insult = 0, identity = 0;
    std::vector<std::string> words;
    const long n = std::clamp(std::lround(length(rng)), 0L, 1200L);
    for (long k = 0; k < n; ++k) words.emplace_back(kCommon[common(rng)]);
    if (toxic) {
      const int n_triggers = 1 + static_cast<int>(coin(rng) < 0.3) + static_cast<int>(coin(rng) < 0.1);
      for (int t = 0; t < n_triggers; ++t) {
        const Trigger& tr = pick(kTriggers);
        obscene |= tr.obscene;
        insult |= tr.insult;
        std::string w = tr.word;
        if (coin(rng) < 0.3) w = std::string(pick(kIntensifiers)) + " " + w;
        if (coin(rng) < 0.25) std::transform(w.begin(), w.end(), w.begin(), [](unsigned char c) { return std::toupper(c); });
        words.insert(words.begin() + static_cast<std::ptrdiff_t>(rng() % (words.size() + 1)), w);
      }
      if (coin(rng) < 0.12) {
        threat = 1;
        words.insert(words.begin() + static_cast<std::ptrdiff_t>(rng() % (words.size() + 1)), pick(kThreat));
      }
      if (coin(rng) < 0.15) {
        identity = 1;
        words.insert(words.begin() + static_cast<std::ptrdiff_t>(rng() % (words.size() + 1)), std::string("i hate ") + pick(kIdentity));
      }
      severe = (n_triggers >= 3 || (threat && n_triggers >= 2)) ? 1 : 0;
    }
    std::string text;
    for (std::size_t k = 0; k < words.size(); ++k) {
      if (k) {
        const double r = coin(rng);
        text += r < 0.015 ? "\n\n" : r < 0.025 ? "\r\n" : r < 0.06 ? ", " : r < 0.09 ? ". " : " ";
      }
      text += words[k];
    }
    if (coin(rng) < 0.03) text = "\"" + text + "\"";  // quoted speech: doubled quotes in the file
    if (coin(rng) < 0.05) text += coin(rng) < 0.5 ? "!!!" : "?";
    if (coin(rng) < o.label_noise) toxic = 1 - toxic;
    if (!toxic) severe = obscene = threat = insult = identity = 0;  // keep every label inside toxic
    char id[17];
    std::snprintf(id, sizeof id, "%016llx", static_cast<unsigned long long>(rng()));
    out << '"' << id << "\"," << text::csv_quote(text) << ',' << toxic << ',' << severe << ',' << obscene << ',' << threat << ',' << insult
        << ',' << identity << '\n';
  }
}

}  // namespace attn::data

namespace attn::data {
namespace {

const char* kNames[] = {"Anna", "Tom", "Priya", "Jonas", "Mei", "Carlos", "Fatima", "Olga", "Sam", "Lukas", "Aiko", "Noah"};
const char* kGreetings[] = {"Hi", "Hello", "Dear", "Hey", "Good morning"};
const char* kSignoffs[] = {"Thanks", "Best regards", "Cheers", "Kind regards", "See you"};
// Sentences that carry the labels: an insult or obscenity built around trigger words, a threat, identity hate.
const char* kInsultFrames[] = {"You are a %s %s and your edits are a joke", "Honestly only a %s %s would write this",
                               "Stop acting like a %s %s on this page", "Your last comment was %s and %s"};
// The civility policy quoted: the same words, no label.
const char* kPolicy[] = {"Please remember that calling someone an idiot or stupid is against the civility policy",
                         "Our guidelines say that words like garbage or moron have no place in a discussion",
                         "The policy page explains why we never call anyone a loser or pathetic here"};

std::string capitalised(std::string s) {
  if (!s.empty() && s[0] >= 'a' && s[0] <= 'z') s[0] = static_cast<char>(s[0] - 'a' + 'A');
  return s;
}

/// A document's sentence that carries its labels: a threat, identity hate, or an insult or
/// obscenity around two trigger words (severe, sometimes, when they differ).
struct CarryingSentence {
  std::string text;
  int severe = 0, obscene = 0, threat = 0, insult = 0, identity = 0;
};

CarryingSentence carrying_sentence(std::mt19937_64& rng, std::uniform_real_distribution<double>& coin) {
  auto pick = [&](auto& array) { return array[rng() % (sizeof array / sizeof *array)]; };
  CarryingSentence c;
  const double kind = coin(rng);
  if (kind < 0.15) {
    c.threat = 1;
    c.text = capitalised(pick(kThreat)) + " if you revert my edit again";
  } else if (kind < 0.27) {
    c.identity = 1;
    c.text = "I hate " + std::string(pick(kIdentity)) + " and they should stay away from this article";
  } else {
    const Trigger& a = pick(kTriggers);
    const Trigger& b = pick(kTriggers);
    char buf[160];
    std::snprintf(buf, sizeof buf, pick(kInsultFrames), a.word, b.word);
    c.text = buf;
    c.obscene = a.obscene || b.obscene;
    c.insult = a.insult || b.insult || !c.obscene;
    c.severe = a.word != b.word && coin(rng) < 0.2;
  }
  return c;
}

/// The number (from 1) of the sentence of `text` that holds byte `at`; 0 if none does.
std::int64_t sentence_number(const std::string& text, std::size_t at) {
  std::int64_t number = 0;
  const auto spans = text::sentence_spans(text);
  for (std::size_t s = 0; s < spans.size(); ++s)
    if (spans[s].first <= at && at < spans[s].second) number = static_cast<std::int64_t>(s) + 1;
  return number;
}

}  // namespace

void write_document_corpus(std::ostream& out, const DocumentCorpusOptions& o) {
  std::mt19937_64 rng(o.seed);
  std::uniform_real_distribution<double> coin(0.0, 1.0);
  // Everyday words only (no triggers), Zipf-like; the ASCII part of kCommon keeps sentences plain.
  std::vector<const char*> words;
  for (const char* w : kCommon)
    if (std::all_of(w, w + std::char_traits<char>::length(w), [](char c) { return (c >= 'a' && c <= 'z') || c == '\''; }))
      words.push_back(w);
  std::discrete_distribution<std::size_t> common = zipf(words.size(), 0.8);
  auto pick = [&](auto& array) { return array[rng() % (sizeof array / sizeof *array)]; };
  const auto everyday = [&] {
    std::string s;
    const int n = 5 + static_cast<int>(rng() % 12);
    for (int k = 0; k < n; ++k) s += (k ? " " : "") + std::string(words[common(rng)]);
    return capitalised(s);
  };

  out << "\"id\",\"comment_text\",\"toxic\",\"severe_toxic\",\"obscene\",\"threat\",\"insult\",\"identity_hate\",\"evidence\"\n";
  for (std::int64_t row = 0; row < o.rows; ++row) {
    int toxic = coin(rng) < o.toxic_rate, severe = 0, obscene = 0, threat = 0, insult = 0, identity = 0;
    std::vector<std::string> body;
    const int n = 3 + static_cast<int>(rng() % 12);
    for (int k = 0; k < n; ++k) body.push_back(everyday());
    if (coin(rng) < 0.25) body.insert(body.begin() + static_cast<std::ptrdiff_t>(rng() % (body.size() + 1)), pick(kPolicy));
    std::size_t carrying = body.size();  // none
    if (toxic) {
      const CarryingSentence c = carrying_sentence(rng, coin);
      std::tie(severe, obscene, threat, insult, identity) = std::tie(c.severe, c.obscene, c.threat, c.insult, c.identity);
      carrying = rng() % (body.size() + 1);
      body.insert(body.begin() + static_cast<std::ptrdiff_t>(carrying), c.text);
    }
    // Greeting line, the body in paragraphs of sentences, the sign-off on two lines.
    std::string text = std::string(pick(kGreetings)) + " " + pick(kNames) + ",\n";
    std::size_t carrying_at = std::string::npos;  // byte offset of the carrying sentence
    for (std::size_t k = 0; k < body.size(); ++k) {
      if (k) text += coin(rng) < 0.2 ? "\n\n" : " ";
      if (k == carrying) carrying_at = text.size();
      const double end = coin(rng);
      text += body[k] + (end < 0.8 ? "." : end < 0.9 ? "?" : "!");
    }
    text += "\n\n" + std::string(pick(kSignoffs)) + ",\n" + pick(kNames);
    const std::int64_t evidence = carrying_at == std::string::npos ? 0 : sentence_number(text, carrying_at);
    if (!toxic) severe = 0;
    char id[17];
    std::snprintf(id, sizeof id, "%016llx", static_cast<unsigned long long>(rng()));
    out << '"' << id << "\"," << text::csv_quote(text) << ',' << toxic << ',' << severe << ',' << obscene << ',' << threat << ',' << insult
        << ',' << identity << ',' << evidence << '\n';
  }
}

namespace {

/// The nine identities Jigsaw 2019 scored, each with the words a comment names it by.
struct Identity {
  const char* column;
  const char* phrases[3];
};
const Identity kIdentities[] = {
    {"male", {"as a man", "men", "my brother"}},
    {"female", {"as a woman", "women", "my sister"}},
    {"homosexual_gay_or_lesbian", {"gay people", "as a gay man", "lesbians"}},
    {"christian", {"christians", "as a christian", "the church"}},
    {"jewish", {"jews", "as a jewish woman", "the synagogue"}},
    {"muslim", {"muslims", "as a muslim", "the mosque"}},
    {"black", {"black people", "as a black man", "black women"}},
    {"white", {"white people", "as a white man", "white women"}},
    {"psychiatric_or_mental_illness", {"mental illness", "people with depression", "the mentally ill"}},
};

/// A civil comment's words: everyday ones (Zipf-like), the identity it names (named >= 0), and
/// when toxic a trigger word (insult, obscene) and sometimes a threat; sentences end now and then.
struct CivilComment {
  std::string text;
  bool insult = false, obscene = false, threat = false;
};

CivilComment civil_comment(std::mt19937_64& rng, std::uniform_real_distribution<double>& coin, std::lognormal_distribution<double>& length,
                           std::discrete_distribution<std::size_t>& common, int named, bool toxic) {
  auto pick = [&](auto& array) { return array[rng() % (sizeof array / sizeof *array)]; };
  const auto insert_anywhere = [&](std::vector<std::string>& words, std::string word) {
    words.insert(words.begin() + static_cast<std::ptrdiff_t>(rng() % (words.size() + 1)), std::move(word));
  };
  CivilComment c;
  std::vector<std::string> words;
  const long n = std::clamp(std::lround(length(rng)), 3L, 400L);
  for (long k = 0; k < n; ++k) words.emplace_back(kCommon[common(rng)]);
  if (named >= 0) insert_anywhere(words, pick(kIdentities[named].phrases));
  if (toxic) {
    const Trigger& tr = pick(kTriggers);
    c.insult = tr.insult;
    c.obscene = tr.obscene;
    insert_anywhere(words, tr.word);
    if (coin(rng) < 0.08) {
      c.threat = true;
      insert_anywhere(words, pick(kThreat));
    }
  }
  for (std::size_t k = 0; k < words.size(); ++k) c.text += (k ? (coin(rng) < 0.06 ? ". " : " ") : "") + words[k];
  return c;
}

/// k / n as the 2019 file writes a share (up to 6 decimals, no trailing zeros beyond one).
std::string share(int k, int n) {
  char b[32];
  std::snprintf(b, sizeof b, "%.6g", static_cast<double>(k) / n);
  std::string s = b;
  if (s.find('.') == std::string::npos && s.find('e') == std::string::npos) s += ".0";
  return s;
}

}  // namespace

void write_civil_corpus(std::ostream& out, const CivilCorpusOptions& o) {
  for (const std::string& b : o.biased)
    if (std::none_of(std::begin(kIdentities), std::end(kIdentities), [&](const Identity& i) { return b == i.column; }))
      throw std::invalid_argument("civil corpus: '" + b + "' is not one of the scored identities");
  if (!(o.bias >= 1)) throw std::invalid_argument("civil corpus: the bias must be >= 1");
  std::mt19937_64 rng(o.seed);
  // sexual_explicit's raters draw from a generator of their own: the other columns stay as they were.
  std::mt19937_64 explicit_rng(o.seed ^ 0x5e8a1e8a1ULL);
  std::uniform_real_distribution<double> coin(0.0, 1.0);
  std::lognormal_distribution<double> length(std::log(25.0), 0.7);
  std::discrete_distribution<std::size_t> common = zipf(sizeof kCommon / sizeof *kCommon, 0.9);
  const auto raters_saying = [&](int n, double p) {
    int k = 0;
    for (int i = 0; i < n; ++i) k += coin(rng) < p;
    return k;
  };
  out << "\"id\",\"target\",\"comment_text\",\"severe_toxicity\",\"obscene\",\"identity_attack\",\"insult\",\"threat\"";
  for (const Identity& i : kIdentities) out << ",\"" << i.column << '"';
  out << ",\"sexual_explicit\",\"identity_annotator_count\",\"toxicity_annotator_count\"\n";
  const std::size_t n_identities = sizeof kIdentities / sizeof *kIdentities;
  for (std::int64_t row = 0; row < o.rows; ++row) {
    const int named = coin(rng) < 1.0 / 3 ? static_cast<int>(rng() % n_identities) : -1;
    const bool biased = named >= 0 && std::find(o.biased.begin(), o.biased.end(), kIdentities[named].column) != o.biased.end();
    const bool toxic = coin(rng) < 0.08 * (biased ? o.bias : 1.0);
    const CivilComment c = civil_comment(rng, coin, length, common, named, toxic);
    // The raters: each says toxic with the comment's chance, and names its kinds.
    const int raters = 4 + static_cast<int>(rng() % 7);
    const int said_toxic = raters_saying(raters, toxic ? 0.8 : 0.07);
    char id[32];
    std::snprintf(id, sizeof id, "%07lld", static_cast<long long>(239000 + row));
    out << id << ',' << share(said_toxic, raters) << ',' << text::csv_quote(c.text) << ','
        << share(raters_saying(raters, toxic ? 0.1 : 0.0), raters) << ',' << share(raters_saying(raters, c.obscene ? 0.7 : 0.01), raters)
        << ',' << share(raters_saying(raters, toxic && named >= 0 ? 0.5 : 0.01), raters) << ','
        << share(raters_saying(raters, c.insult ? 0.7
                                       : toxic  ? 0.2
                                                : 0.02),
                 raters)
        << ',' << share(raters_saying(raters, c.threat ? 0.8 : 0.005), raters);
    const bool annotated = coin(rng) < 0.25;
    const int id_raters = annotated ? 4 + static_cast<int>(rng() % 7) : 0;
    for (std::size_t i = 0; i < n_identities; ++i) {
      out << ',';
      if (annotated) out << share(raters_saying(id_raters, static_cast<int>(i) == named ? 0.9 : 0.01), id_raters);
    }
    int said_explicit = 0;
    for (int i = 0; i < raters; ++i) said_explicit += coin(explicit_rng) < (c.obscene ? 0.3 : 0.005);
    out << ',' << share(said_explicit, raters) << ',' << id_raters << ',' << raters << '\n';
  }
}

void write_spans_corpus(std::ostream& out, const SpansCorpusOptions& o) {
  std::mt19937_64 rng(o.seed);
  std::uniform_real_distribution<double> coin(0.0, 1.0);
  std::vector<const char*> words;  // everyday ASCII words, Zipf-like (as the documents' sentences)
  for (const char* w : kCommon)
    if (std::all_of(w, w + std::char_traits<char>::length(w), [](char c) { return (c >= 'a' && c <= 'z') || c == '\''; }))
      words.push_back(w);
  std::discrete_distribution<std::size_t> common = zipf(words.size(), 0.8);
  auto pick = [&](auto& array) { return array[rng() % (sizeof array / sizeof *array)]; };
  out << "\"spans\",\"text\"\n";
  for (std::int64_t row = 0; row < o.rows; ++row) {
    std::string text;
    std::vector<std::int64_t> marked;
    const auto mark = [&](const std::string& part) {  // appends `part`, every character of it marked
      for (std::size_t c = 0; c < part.size(); ++c) marked.push_back(static_cast<std::int64_t>(text.size() + c));
      text += part;
    };
    const double kind = coin(rng);  // an insult, a threat, the policy quoted, or nothing
    const int sentences = 1 + static_cast<int>(rng() % 3), carrying = static_cast<int>(rng() % static_cast<unsigned>(sentences));
    for (int s = 0; s < sentences; ++s) {
      if (s) text += " ";
      const int n = 4 + static_cast<int>(rng() % 9);
      const int at = s == carrying && kind < 0.85 ? static_cast<int>(rng() % static_cast<unsigned>(n + 1)) : -1;  // the toxic part's place
      for (int k = 0; k <= n; ++k) {
        if (k == at) {
          if (k) text += " ";
          if (kind < 0.7) {  // an insult: the word's letters, not its intensifier or punctuation
            if (coin(rng) < 0.3) text += std::string(pick(kIntensifiers)) + " ";
            mark(pick(kTriggers).word);
            if (coin(rng) < 0.4) text += pick(kPunctuation);
          } else {
            mark(pick(kThreat));
          }
        }
        if (k == n) break;
        if (k > 0 || at == 0) text += " ";
        text += words[common(rng)];
      }
      if (s == carrying && kind >= 0.85 && kind < 0.93) text += std::string(" ") + pick(kPolicy);
      text += ".";
    }
    std::string spans = "[";
    for (std::size_t i = 0; i < marked.size(); ++i) spans += (i ? ", " : "") + std::to_string(marked[i]);
    out << text::csv_quote(spans + "]") << ',' << text::csv_quote(text) << '\n';
  }
}

}  // namespace attn::data
