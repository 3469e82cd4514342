// The ulp-error report: its statistics, the gcovr summary reader, the JSON and HTML it writes, and a real run over a
// CPU variant (every cell present, the worst case saved and replayable, a precision loss visible in the figures).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>

#include "cuda/device_probe.h"
#include "problem/case_file.h"
#include "properties/fuzz_campaign.h"
#include "properties/runner.h"
#include "reports/gcovr_summary.h"
#include "reports/report_files.h"
#include "reports/run_report.h"
#include "reports/ulp_statistics.h"
#include "tests/fixtures/problem_builders.h"
#include "tests/fixtures/test_files.h"

namespace pacheck::reports {
namespace {

using testing::contains;
using testing::fresh_dir;
using testing::read_text;
using testing::thrown_message;
namespace fs = std::filesystem;

constexpr double kInf = std::numeric_limits<double>::infinity();

// Whether the generator could have drawn this sequence in `mode` (continuations include decode- and prefill-shaped
// ones: one new query, or every position new).
bool drawn_in_mode(const Sequence& seq, Mode mode) {
  switch (mode) {
    case Mode::decode: return seq.num_queries == 1;
    case Mode::prefill: return seq.num_queries == seq.context_len;
    case Mode::continuation: return seq.num_queries >= 1 && seq.num_queries <= seq.context_len;
  }
  return false;
}

// --- statistics

TEST(UlpHistogram, BinsArePowersOfTwoOfUlps) {
  const UlpHistogram h;
  EXPECT_EQ(h.bins(), 24);
  const std::pair<double, int> bins[] = {{0, 0}, {0.25, 1}, {1, 1}, {1.5, 2}, {2, 2}, {3, 3}, {4, 3}, {5, 4}, {-5, 4},
                                         {std::ldexp(1.0, 20), h.beyond_bin() - 1},
                                         {std::ldexp(1.0, 20) + 1, h.beyond_bin()},
                                         {1e300, h.beyond_bin()},
                                         {kInf, h.non_finite_bin()},
                                         {std::nan(""), h.non_finite_bin()}};
  for (const auto& [value, bin] : bins) EXPECT_EQ(h.bin_of(value), bin) << value;
}

TEST(UlpHistogram, LabelsNameEachBinsUpperEdge) {
  const UlpHistogram h;
  EXPECT_EQ(h.label(0), "0");
  EXPECT_EQ(h.label(1), "<=1");
  EXPECT_EQ(h.label(3), "<=4");
  EXPECT_EQ(h.label(h.beyond_bin()), ">1048576");
  EXPECT_EQ(h.label(h.non_finite_bin()), "non-finite");
  EXPECT_EQ(h.short_label(11), "1K");
  EXPECT_EQ(h.short_label(h.beyond_bin() - 1), "1M");
  EXPECT_EQ(h.short_label(h.non_finite_bin()), "NaN");
}

TEST(UlpHistogram, AddsAndMergesAndKeepsEachBinsWorstRatio) {
  UlpHistogram a, b;
  a.add(0, 0.1, 5);
  a.add(3, 0.2);
  b.add(3, 0.7, 2);
  b.add(kInf, kInf);
  a.merge(b);
  EXPECT_EQ(a.count(0), 5u);
  EXPECT_EQ(a.count(3), 3u);
  EXPECT_EQ(a.count(a.non_finite_bin()), 1u);
  EXPECT_EQ(a.total(), 9u);
  EXPECT_DOUBLE_EQ(a.worst_normalized(0), 0.1);
  EXPECT_DOUBLE_EQ(a.worst_normalized(3), 0.7);
  EXPECT_EQ(a.worst_normalized(2), 0);  // empty
  a.add(2, std::nan(""));
  EXPECT_EQ(a.worst_normalized(2), kInf);  // a NaN ratio is the worst there is
  EXPECT_THROW(a.merge(RatioHistogram()), std::invalid_argument);
}

TEST(RatioHistogram, BinsFractionsOfTheBoundWithTheVerdictsLineAsABinEdge) {
  const RatioHistogram h;
  EXPECT_EQ(h.bins(), 36);
  EXPECT_EQ(h.bin_of(0), 0);
  EXPECT_EQ(h.bin_of(1e-9), 1);  // below 2^-16
  EXPECT_EQ(h.label(1), "<=2^-16");
  EXPECT_EQ(h.short_label(h.bin_of(0.5)), "1/2");
  EXPECT_EQ(h.short_label(h.bin_of(1.0 / 1024)), "1/1K");
  // An element exactly at its bound passes, one just above it fails: they fall on either side of an edge.
  EXPECT_EQ(h.label(h.bin_of(1.0)), "<=1");
  EXPECT_EQ(h.bin_of(std::nextafter(1.0, 2.0)), h.bin_of(1.0) + 1);
  EXPECT_EQ(h.label(h.beyond_bin()), ">65536");
}

TEST(Log2Histogram, QuantilesAreTheUpperEdgeOfTheirBin) {
  RatioHistogram h;
  EXPECT_EQ(h.quantile_at_most(0.5), 0);
  h.add(0, 0, 10);
  h.add(0.3, 0.3, 80);
  h.add(3, 3, 10);
  EXPECT_EQ(h.quantile_at_most(0.05), 0);
  EXPECT_EQ(h.quantile_at_most(0.5), 0.5);
  EXPECT_EQ(h.quantile_at_most(0.9), 0.5);
  EXPECT_EQ(h.quantile_at_most(0.95), 4);
  h.add(kInf, kInf);
  EXPECT_EQ(h.quantile_at_most(1.0), kInf);
}

TEST(ShapeBreakdown, BucketsArePowersOfTwo) {
  const std::pair<int, int> buckets[] = {{1, 0}, {2, 1}, {3, 2}, {4, 2}, {5, 3}, {128, 7}, {129, 8}};
  for (const auto& [size, bucket] : buckets) EXPECT_EQ(ShapeBreakdown::bucket_of(size), bucket) << size;
  const std::pair<int, const char*> labels[] = {{0, "1"}, {1, "2"}, {2, "3-4"}, {8, "129-256"}};
  for (const auto& [bucket, label] : labels) EXPECT_EQ(ShapeBreakdown::bucket_label(bucket), label);
}

TEST(Distribution, QuantilesAreNearestRank) {
  Distribution d;
  EXPECT_EQ(d.quantile(0.5), 0);
  for (int i = 1; i <= 100; ++i) d.add(i);
  EXPECT_EQ(d.size(), 100u);
  EXPECT_EQ(d.quantile(0.5), 50);
  EXPECT_EQ(d.quantile(0.99), 99);
  EXPECT_EQ(d.quantile(1.0), 100);
  EXPECT_EQ(d.quantile(0.0), 1);
  EXPECT_EQ(d.max(), 100);
}

TEST(Distribution, CountsRepeatsAndTreatsNanAsInfinity) {
  Distribution d;
  d.add(0, 98);
  d.add(7);
  d.add(std::nan(""));
  EXPECT_EQ(d.quantile(0.5), 0);
  EXPECT_EQ(d.quantile(0.99), 7);
  EXPECT_EQ(d.max(), kInf);
  d.add(3, 0);  // adding nothing changes nothing
  EXPECT_EQ(d.size(), 100u);
}

Problem tiny_problem(DType dtype) {
  Problem p = pacheck::testing::single_sequence(2, 1, 1, 2, 2, [](int) { return 0.0; }, dtype);
  p.k_pool = {1, 0, 0, 1};
  p.v_pool = {1, 2, 3, 4};
  p.queries = {1, 1};
  return p;
}

Agreement agreement_with(std::vector<double> ulps, double error, double bound, std::size_t worst_element) {
  Agreement a;
  a.elements = ulps.size();
  a.scaled_ulps = ulps;
  for (std::size_t e = 0; e < ulps.size(); ++e)
    a.normalized.push_back(e == worst_element ? error / bound : 0.01 * static_cast<double>(e + 1));
  a.ulps = std::move(ulps);
  for (double u : a.ulps) a.worst_ulps = std::max(a.worst_ulps, u);
  a.worst.element = worst_element;
  a.worst.error = error;
  a.worst.bound = bound;
  a.ok = error <= bound;
  return a;
}

const Knobs kKnobs;
const std::string kAgreement = "UlpBoundedAgreement";

TEST(CellStatistics, KeepsTheWorstOutputAndEveryElement) {
  const Problem p = tiny_problem(DType::f32);
  CellStatistics stats;
  const Agreement first = agreement_with({0, 1}, 1e-7, 1e-6, 0);   // 0.1 of bound
  const Agreement second = agreement_with({0, 4}, 5e-7, 1e-6, 1);  // 0.5 of bound: the worst
  const Agreement third = agreement_with({2, 2}, 2e-7, 1e-6, 0);
  for (const Agreement* a : {&first, &second, &third}) stats.observe(CaseObservation{kAgreement, p, kKnobs, a});
  stats.observe(CaseObservation{kAgreement, p, kKnobs, nullptr});  // a run-vs-run property: no figures
  EXPECT_EQ(stats.compared_outputs(), 3u);
  EXPECT_EQ(stats.elements(), 6u);
  EXPECT_EQ(stats.histogram().total(), 6u);
  EXPECT_EQ(stats.scaled_ulps().max(), 4);
  EXPECT_EQ(stats.ratio_histogram().total(), 6u);
  EXPECT_DOUBLE_EQ(stats.histogram().worst_normalized(stats.histogram().bin_of(4)), 0.5);
  EXPECT_DOUBLE_EQ(stats.tightness().max(), 0.5);
  EXPECT_DOUBLE_EQ(stats.tightness().quantile(0.5), 0.2);
  ASSERT_TRUE(stats.worst().has_value());
  EXPECT_DOUBLE_EQ(stats.worst()->element.normalized(), 0.5);
  EXPECT_EQ(stats.worst()->position, element_position(p, 1));
}

TEST(CellStatistics, AnOutputOfTheWrongSizeCountsEveryElementAsNonFinite) {
  const Problem p = tiny_problem(DType::f16);
  Agreement a;
  a.ok = false;
  a.elements = 2;
  a.violations = 1;
  a.worst.error = kInf;
  CellStatistics stats;
  stats.observe(CaseObservation{kAgreement, p, kKnobs, &a});
  EXPECT_EQ(stats.histogram().count(stats.histogram().non_finite_bin()), 2u);
  EXPECT_EQ(stats.ratio_histogram().count(stats.ratio_histogram().non_finite_bin()), 2u);
  EXPECT_EQ(stats.tightness().max(), kInf);
}

// --- gcovr's JSON summary

// The sample holds oracle/oracle.cpp (2 of 2 lines, 1 of 1 function), variants/cpu_gather.cpp (2 of 3 lines, 1 of 2
// branches, 1 of 2 functions) and variants/registry.cpp (10 of 10 lines, 4 of 4 functions).
nlohmann::json coverage_sample() { return nlohmann::json::parse(read_text(PACHECK_COVERAGE_SAMPLE)); }

// A folder's figures as hit/found.
std::string counts(const FolderCoverage& f) {
  std::ostringstream out;
  out << f.folder << " " << f.files << " files, lines " << f.lines.hit << "/" << f.lines.found << ", branches "
      << f.branches.hit << "/" << f.branches.found << ", functions " << f.functions.hit << "/" << f.functions.found;
  return out.str();
}

TEST(GcovrSummary, AddsUpEachFileIntoItsFolder) {
  const CoverageSummary s = parse_gcovr_summary(coverage_sample().dump());
  ASSERT_EQ(s.folders.size(), 2u);
  EXPECT_EQ(counts(s.folders[0]), "oracle/ 1 files, lines 2/2, branches 0/0, functions 1/1");
  EXPECT_EQ(counts(s.folders[1]), "variants/ 2 files, lines 12/13, branches 1/2, functions 5/6");
  EXPECT_EQ(counts(s.total), "total 3 files, lines 14/15, branches 1/2, functions 6/7");
  EXPECT_NEAR(s.total.lines.percent(), 100.0 * 14 / 15, 1e-9);
  const std::string table = format_coverage_table(s);
  EXPECT_TRUE(contains(table, "variants/"));
  EXPECT_TRUE(contains(table, "total"));
  EXPECT_EQ(to_json(s)["folders"]["variants/"]["lines"]["hit"], 12);
}

TEST(GcovrSummary, FilesOutsideTheRootGoByTheirDirectory) {
  nlohmann::json j = coverage_sample();
  j["files"][0]["filename"] = "/elsewhere/cuda/host.cpp";  // gcovr writes a file outside its --root absolute
  j["files"][1]["filename"] = "main.cpp";                  // and one at the root by its name alone
  const CoverageSummary s = parse_gcovr_summary(j.dump());
  ASSERT_EQ(s.folders.size(), 3u);
  EXPECT_EQ(s.folders[0].folder, "./");
  EXPECT_EQ(s.folders[1].folder, "cuda/");
  EXPECT_EQ(s.folders[2].folder, "variants/");
}

TEST(GcovrSummary, NothingFoundCountsAsFullyCovered) {
  EXPECT_EQ(CoverageCount{}.percent(), 100.0);
}

TEST(GcovrSummary, RejectsWhatIsNotAGcovrSummary) {
  const auto rejects = [](const std::string& text, const std::string& mentions) {
    EXPECT_TRUE(contains(thrown_message<CoverageFormatError>([&] { parse_gcovr_summary(text); }), mentions)) << text;
  };
  const auto with = [](const std::function<void(nlohmann::json&)>& change) {
    nlohmann::json j = coverage_sample();
    change(j);
    return j.dump();
  };
  rejects("", "not JSON");
  rejects("TN:\nSF:/src/a.cpp\n", "not JSON");  // an lcov tracefile
  rejects("[]", "no \"gcovr/summary_format_version\" key");
  rejects(with([](auto& j) { j.erase("gcovr/summary_format_version"); }), "no \"gcovr/summary_format_version\"");
  rejects(with([](auto& j) { j.erase("files"); }), "no \"files\" array");
  rejects(with([](auto& j) { j["files"] = nlohmann::json::array(); }), "lists no files");
  rejects(with([](auto& j) { j["files"][1] = 7; }), "files[1] is not an object");
  rejects(with([](auto& j) { j["files"][1].erase("filename"); }), "files[1]: \"filename\" is missing");
  rejects(with([](auto& j) { j["files"][2]["filename"] = "variants/cpu_gather.cpp"; }),
          "files[2]: variants/cpu_gather.cpp is listed twice");
  rejects(with([](auto& j) { j["files"][1].erase("branch_total"); }),
          "files[1] (variants/cpu_gather.cpp): \"branch_total\" is missing or not a non-negative integer");
  rejects(with([](auto& j) { j["files"][1]["line_covered"] = "2"; }), "\"line_covered\" is missing or not");
  rejects(with([](auto& j) { j["files"][1]["line_covered"] = -2; }), "\"line_covered\" is missing or not");
  rejects(with([](auto& j) { j["files"][1]["function_total"] = 1.5; }), "\"function_total\" is missing or not");
  rejects(with([](auto& j) { j["files"][1]["line_covered"] = 4; }), "line_covered 4 exceeds line_total 3");
}

TEST(GcovrSummary, ReadingNamesTheFile) {
  const auto message = [](const fs::path& file) {
    return thrown_message<CoverageFormatError>([&] { read_gcovr_summary(file); });
  };
  EXPECT_TRUE(contains(message("/nonexistent/gcovr-summary.json"),
                       "cannot open the gcovr JSON summary /nonexistent/gcovr-summary.json"));
  const fs::path dir = fresh_dir("gcovr_read");
  std::ofstream(dir / "bad.json") << "{}";
  const std::string bad = message(dir / "bad.json");
  EXPECT_EQ(bad.rfind((dir / "bad.json").string() + ": not a gcovr JSON summary", 0), 0u) << bad;
  fs::remove_all(dir);
}

TEST(AttachCoverage, LinksGcovrsPagesRelativeToTheReportFolder) {
  const fs::path dir = fresh_dir("coverage");
  fs::create_directories(dir / "cov" / "html");
  std::ofstream(dir / "cov" / "gcovr-summary.json") << coverage_sample().dump();
  std::ofstream(dir / "cov" / "html" / "index.html") << "<html></html>";
  Report report;
  report.out_dir = dir / "out";
  fs::create_directories(report.out_dir);
  attach_coverage(report, dir / "cov" / "gcovr-summary.json");
  ASSERT_TRUE(report.coverage.has_value()) << report.coverage_note;
  EXPECT_EQ(report.coverage_html, "../cov/html/index.html");
  EXPECT_EQ(report.coverage->gcovr_summary, dir / "cov" / "gcovr-summary.json");

  Report missing;
  missing.out_dir = report.out_dir;
  attach_coverage(missing, dir / "nowhere.json");
  EXPECT_FALSE(missing.coverage.has_value());
  EXPECT_TRUE(contains(missing.coverage_note, "coverage-report"));

  std::ofstream(dir / "bad.json") << "garbage\n";
  Report bad;
  bad.out_dir = report.out_dir;
  attach_coverage(bad, dir / "bad.json");
  EXPECT_FALSE(bad.coverage.has_value());
  EXPECT_TRUE(contains(bad.coverage_note, "could not be read"));
  fs::remove_all(dir);
}

// --- a real run

// cpu_streaming renamed, with narrower capabilities, and optionally lossy: every fp32 output rounded to bf16's 8
// significant bits first, under cpu_streaming's error model, so it breaks its bound.
class StreamingForTest final : public ForwardingVariant {
 public:
  explicit StreamingForTest(std::string name, bool lossy = false, bool needs_gpu = false)
      : ForwardingVariant(Registry::instance().get("cpu_streaming")), name_(std::move(name)), lossy_(lossy),
        needs_gpu_(needs_gpu) {}
  std::string name() const override { return name_; }
  Capabilities capabilities() const override {
    Capabilities c = inner_.capabilities();
    c.needs_gpu = needs_gpu_;
    c.dtypes = {DType::f32};
    c.modes = {Mode::decode};
    return c;
  }
  Output run(const Problem& p, const Knobs& k) const override {
    Output out = inner_.run(p, k);
    if (lossy_)
      for (float& x : out) x = round_to_dtype_f(round_to_dtype(x, DType::bf16), p.dtype);
    return out;
  }

 private:
  std::string name_;
  bool lossy_, needs_gpu_;
};

ReportSettings small_settings(const fs::path& out, std::vector<const Variant*> variants) {
  ReportSettings s;
  s.out_dir = out;
  s.cases = 3;
  s.seed = 7;
  s.kill_cases = 0;
  s.variants = std::move(variants);
  s.source_root = PACHECK_SOURCE_DIR;
  s.command_line = "report_test";
  return s;
}

TEST(RunReport, CoversEveryDtypeAndModeOfACpuVariant) {
  const fs::path dir = fresh_dir("cells");
  const Variant& streaming = Registry::instance().get("cpu_streaming");
  int last_done = 0, total = 0;
  const Report r = run_report(small_settings(dir, {&streaming}), [&](const Progress& p) {
    EXPECT_EQ(p.done, last_done + 1);
    last_done = p.done;
    total = p.total;
  });
  EXPECT_EQ(last_done, total);
  ASSERT_EQ(r.variants.size(), 1u);
  const VariantReport& v = r.variants[0];
  EXPECT_FALSE(v.skipped);
  EXPECT_TRUE(v.passed());
  ASSERT_EQ(v.cells.size(), 9u);  // 3 dtypes x 3 modes
  for (const CellReport& c : v.cells) {
    SCOPED_TRACE(std::string(dtype_name(c.dtype)) + " " + mode_name(c.mode));
    EXPECT_GT(c.cases, 0);
    EXPECT_GT(c.compared_outputs, 0u);
    EXPECT_EQ(c.histogram.total(), c.elements);
    EXPECT_LE(c.median_ulps, c.p99_ulps);
    EXPECT_LE(c.p99_ulps, c.worst_ulps);
    EXPECT_LE(c.tightness_median, c.worst_normalized);
    EXPECT_LE(c.worst_normalized, 1.0);
    ASSERT_TRUE(c.worst.has_value());
    // The worst case replays: it is a valid case file of this dtype, drawn in this mode.
    const Case saved = read_case_file(dir / c.worst->file);
    EXPECT_EQ(saved.problem.dtype, c.dtype);
    for (const Sequence& seq : saved.problem.sequences) EXPECT_TRUE(drawn_in_mode(seq, c.mode)) << describe(saved.problem);
    // Its replay line runs from the report folder: no absolute or build path in it.
    EXPECT_EQ(c.worst->replay, "pacheck replay " + c.worst->file.generic_string() + " --variant cpu_streaming");
    EXPECT_EQ(c.worst->file.generic_string().rfind("cases/cpu_streaming/", 0), 0u);
    // Scaled ulps never exceed raw ones (an element's scale is at least its own magnitude).
    EXPECT_LE(c.worst_ulps, c.raw_worst_ulps);
    EXPECT_EQ(c.ratio_histogram.total(), c.elements);
    // Each shape dimension's buckets hold every element once.
    for (int d = 0; d < ShapeBreakdown::kDimensionCount; ++d) {
      std::uint64_t elements = 0;
      for (const auto& [bucket, stats] : c.breakdown.dimensions[d]) {
        elements += stats.elements;
        EXPECT_LE(stats.worst_normalized, c.worst_normalized);
      }
      EXPECT_EQ(elements, c.elements) << ShapeBreakdown::kDimensions[d];
    }
    // ... and so does the features breakdown, each element under its problem's whole set of features.
    std::uint64_t featured = 0;
    for (const auto& [names, stats] : c.breakdown.features) featured += stats.elements;
    EXPECT_EQ(featured, c.elements);
  }
  EXPECT_NE(v.determinism.status, GuaranteeCheck::Status::failed);
  EXPECT_NE(v.batch_isolation.status, GuaranteeCheck::Status::failed);
  EXPECT_FALSE(r.kill_matrix.has_value());
  EXPECT_TRUE(contains(r.kill_matrix_note, "--kill-cases 0"));

  const ReportFiles files = write_report_files(r);
  const nlohmann::json j = nlohmann::json::parse(read_text(files.json));
  EXPECT_EQ(j["schema_version"], kUlpJsonSchemaVersion);
  EXPECT_EQ(j["variants"][0]["cells"].size(), 9u);
  EXPECT_EQ(j["variants"][0]["cells"][0]["histogram"].size(), static_cast<std::size_t>(UlpHistogram().bins()));
  EXPECT_EQ(j["histogram_bins"].size(), static_cast<std::size_t>(UlpHistogram().bins()));
  EXPECT_EQ(j["error_over_bound_bins"].size(), static_cast<std::size_t>(RatioHistogram().bins()));
  EXPECT_EQ(j["variants"][0]["cells"][0]["error_over_bound_histogram"].size(),
            static_cast<std::size_t>(RatioHistogram().bins()));
  const std::string html = read_text(files.html);
  EXPECT_TRUE(contains(html, "<svg"));
  EXPECT_TRUE(contains(html, v.cells[0].worst->replay));
  fs::remove_all(dir);
}

TEST(RunReport, APrecisionLossMovesTheHistogramAndTheTightness) {
  const fs::path dir = fresh_dir("lossy");
  const StreamingForTest exact("exact_streaming_for_report_test");
  const StreamingForTest lossy("lossy_streaming_for_report_test", true);
  ReportSettings settings = small_settings(dir, {&exact, &lossy});
  settings.cases = 8;
  const Report r = run_report(settings);
  ASSERT_EQ(r.variants.size(), 2u);
  const VariantReport& good = r.variants[0];
  const VariantReport& bad = r.variants[1];
  EXPECT_TRUE(good.passed());
  EXPECT_FALSE(bad.passed());
  EXPECT_FALSE(r.non_mutants_passed());
  // One fp32 decode cell each: cpu_streaming's elements almost all within 64 ulps and their bound; rounded to bf16,
  // nearly all are hundreds to tens of thousands of ulps off, beyond their bound.
  ASSERT_EQ(good.cells.size(), 1u);
  ASSERT_EQ(bad.cells.size(), 1u);
  const CellReport& good_f32 = good.cells[0];
  const CellReport& bad_f32 = bad.cells[0];
  EXPECT_LE(good_f32.worst_normalized, 1.0);
  EXPECT_GT(bad_f32.worst_normalized, 1.0);
  EXPECT_GT(bad_f32.tightness_median, good_f32.tightness_median);
  // The elements of a histogram above `value`.
  const auto above = [](const Log2Histogram& h, double value) {
    std::uint64_t n = 0;
    for (int bin = h.bin_of(value); bin < h.bins(); ++bin) n += h.count(bin);
    return n;
  };
  const UlpHistogram good_hist = good.histogram(DType::f32);
  const UlpHistogram bad_hist = bad.histogram(DType::f32);
  const double bad_fraction = static_cast<double>(above(bad_hist, 65)) / bad_hist.total();
  const double good_fraction = static_cast<double>(above(good_hist, 65)) / good_hist.total();
  EXPECT_GT(bad_fraction, 0.5);
  // The correct kernel's elements beyond 64 ulps are rows of huge logits (the below_sentinel draw), within bounds
  // that grow with them.
  EXPECT_LT(good_fraction, bad_fraction / 3);
  const RatioHistogram good_ratio = good.ratio_histogram(DType::f32);
  const RatioHistogram bad_ratio = bad.ratio_histogram(DType::f32);
  EXPECT_EQ(above(good_ratio, 1.5), 0u) << "every element of a correct kernel within its bound";
  EXPECT_GT(static_cast<double>(above(bad_ratio, 1.5)) / bad_ratio.total(), 0.5);
  // The report ran on past the failures: every case counted, the last failing one saved and named for replay.
  const PropertyOutcome& agreement = bad_f32.properties.front();
  ASSERT_EQ(agreement.property, "UlpBoundedAgreement");
  EXPECT_EQ(agreement.verdict, Verdict::failed);
  EXPECT_EQ(agreement.cases, settings.cases);
  EXPECT_GT(agreement.failed_cases, settings.cases / 2);
  EXPECT_GE(bad_f32.compared_outputs, static_cast<std::size_t>(settings.cases));
  bool found_replay = false;
  for (const CellReport& c : bad.cells)
    for (const PropertyOutcome& o : c.properties)
      if (o.verdict == Verdict::failed && !o.replay.empty()) {
        found_replay = true;
        EXPECT_EQ(o.replay.rfind("pacheck replay failures/", 0), 0u) << o.replay;
        const std::size_t from = o.replay.find(" replay ") + 8;
        const std::string file = o.replay.substr(from, o.replay.find(" --variant") - from);
        EXPECT_TRUE(fs::exists(dir / file)) << o.replay;
        EXPECT_EQ(o.failure.find(dir.string()), std::string::npos) << o.failure;
      }
  EXPECT_TRUE(found_replay);
  fs::remove_all(dir);
}

// The page's alarm classes: a broken bound (cell, bar), a non-finite bar, a failed verdict or property, a worse
// figure in a comparison.
const char* const kAlarmClasses[] = {"class=\"over\"", "class=\"b-over\"", "class=\"b-nan\"", "class=\"fail\"",
                                     "class=\"bad\"", "class=\"worse\""};

std::vector<std::string> alarm_classes_in(const std::string& html) {
  std::vector<std::string> found;
  for (const char* cls : kAlarmClasses)
    if (html.find(cls) != std::string::npos) found.push_back(cls);
  return found;
}

TEST(RunReport, ACorrectVariantsPageRaisesNoAlarm) {
  const fs::path dir = fresh_dir("no_alarm");
  const Variant& streaming = Registry::instance().get("cpu_streaming");
  const Report r = run_report(small_settings(dir, {&streaming}));
  ASSERT_TRUE(r.non_mutants_passed());
  const std::string html = render_html(r);
  EXPECT_EQ(alarm_classes_in(html), std::vector<std::string>{});
  // In fp32 not even amber: every bar of both fp32 histograms is green.
  const VariantReport& v = r.variants[0];
  for (const Log2Histogram& h : {static_cast<Log2Histogram>(v.histogram(DType::f32)),
                                 static_cast<Log2Histogram>(v.ratio_histogram(DType::f32))}) {
    const std::string svg = histogram_svg(h, "f32", "ulps");
    EXPECT_TRUE(contains(svg, "class=\"b-ok\""));
    EXPECT_EQ(svg.find("class=\"b-near\""), std::string::npos) << svg;
  }
  // The control: the same page with one broken bound shows the alarm.
  Report broken = r;
  broken.variants[0].cells[0].worst_normalized = 1.5;
  broken.variants[0].cells[0].histogram.add(1e9, 1.5);
  const std::vector<std::string> alarms = alarm_classes_in(render_html(broken));
  EXPECT_NE(std::find(alarms.begin(), alarms.end(), "class=\"over\""), alarms.end());
  EXPECT_NE(std::find(alarms.begin(), alarms.end(), "class=\"b-over\""), alarms.end());
  fs::remove_all(dir);
}

// Two runs of one variant name, before and after a change: the precision loss is flagged, a rerun flags nothing.
TEST(CompareReports, FlagsAPrecisionLossAndNothingElse) {
  const fs::path dir = fresh_dir("compare");
  const StreamingForTest exact("streaming_for_compare_test");
  const StreamingForTest lossy("streaming_for_compare_test", true);
  const nlohmann::json before = to_json(run_report(small_settings(dir / "before", {&exact})));
  const nlohmann::json again = to_json(run_report(small_settings(dir / "again", {&exact})));
  const nlohmann::json after = to_json(run_report(small_settings(dir / "after", {&lossy})));

  const Comparison same = compare_reports(before, again, {}, "before/ulp.json");
  EXPECT_FALSE(same.worse());
  ASSERT_EQ(same.variants.size(), 1u);
  ASSERT_EQ(same.variants[0].cells.size(), 1u);
  for (const FigureChange& f : same.variants[0].cells[0].figures) EXPECT_EQ(f.before, f.after) << f.figure;

  const Comparison lost = compare_reports(before, after, {}, "before/ulp.json");
  EXPECT_TRUE(lost.worse());
  ASSERT_EQ(lost.variants.size(), 1u);
  const CellComparison& cell = lost.variants[0].cells.at(0);
  EXPECT_EQ(cell.dtype, dtype_name(DType::f32));
  EXPECT_EQ(cell.mode, "decode");
  EXPECT_EQ(cell.verdict_before, "pass");
  EXPECT_EQ(cell.verdict_after, "fail");
  for (const FigureChange& f : cell.figures) {
    SCOPED_TRACE(f.figure);
    if (f.figure == "error/bound median" || f.figure == "error/bound worst" || f.figure == "ulps p99") {
      EXPECT_TRUE(f.worse);
      EXPECT_GT(f.after, f.before);
    }
  }
  // The reverse direction is an improvement: nothing flagged.
  EXPECT_FALSE(compare_reports(after, before, {}, "after/ulp.json").worse());
  // A pair names a differently called counterpart; variants without one are listed on their own.
  nlohmann::json renamed = after;
  renamed["variants"][0]["name"] = "renamed_streaming";
  EXPECT_EQ(compare_reports(before, renamed, {}, "x").variants.size(), 2u);
  const Comparison paired = compare_reports(before, renamed, {{"renamed_streaming", "streaming_for_compare_test"}}, "x");
  ASSERT_EQ(paired.variants.size(), 1u);
  EXPECT_TRUE(paired.worse());
  // The page shows it.
  Report shown;
  shown.comparison = lost;
  const std::string html = render_html(shown);
  EXPECT_TRUE(contains(html, "id=\"comparison\""));
  EXPECT_TRUE(contains(html, "class=\"worse\""));
  EXPECT_TRUE(contains(html, "Precision got worse"));
  fs::remove_all(dir);
}

TEST(RunReport, GpuVariantsRunOnlyWithADevice) {
  const fs::path dir = fresh_dir("gpu");
  const StreamingForTest gpu_variant("pretend_gpu_for_report_test", false, true);
  const Report r = run_report(small_settings(dir, {&gpu_variant}));
  ASSERT_EQ(r.variants.size(), 1u);
  std::string reason;
  if (cuda_device_available(&reason)) {
    EXPECT_FALSE(r.variants[0].skipped);
    EXPECT_EQ(r.variants[0].cells.size(), 1u);
  } else {
    EXPECT_TRUE(r.variants[0].skipped);
    EXPECT_EQ(r.variants[0].skip_reason, reason);
    EXPECT_TRUE(r.variants[0].cells.empty());
    EXPECT_FALSE(r.variants[0].passed());
    EXPECT_TRUE(r.non_mutants_passed());  // skipped is not failed
    const nlohmann::json j = to_json(r);
    EXPECT_EQ(j["variants"][0]["status"], "skipped");
    EXPECT_EQ(j["variants"][0]["skip_reason"], reason);
    EXPECT_TRUE(contains(render_html(r), html_escape(reason)));
  }
  fs::remove_all(dir);
}

TEST(RunReport, ReplacesWhatItsManifestListsAndKeepsTheUsersFiles) {
  const fs::path dir = fresh_dir("stale");
  fs::create_directories(dir / "failures" / "old");
  fs::create_directories(dir / "cases");
  std::ofstream(dir / "failures" / "old" / "stale.json") << "{}";
  std::ofstream(dir / "cases" / "mine.json") << "{}";
  std::ofstream(dir / "notes.txt") << "mine";
  std::ofstream(dir / kManifestName) << "[\"failures/old/stale.json\"]";
  const StreamingForTest narrow("narrow_streaming_for_report_test");
  ReportSettings settings = small_settings(dir, {&narrow});
  settings.cases = 1;
  for (int run = 0; run < 2; ++run) {
    const Report r = run_report(settings);
    write_report_files(r);
    EXPECT_FALSE(fs::exists(dir / "failures" / "old" / "stale.json"));
    EXPECT_TRUE(fs::exists(dir / "notes.txt"));  // not the report's: left alone
    EXPECT_TRUE(fs::exists(dir / "cases" / "mine.json")) << "run " << run;
    EXPECT_TRUE(fs::exists(dir / "cases" / "narrow_streaming_for_report_test" / "fp32-decode-worst.json"));
  }
  fs::remove_all(dir);
}

// --- run_property narrowing

TEST(RunPropertyNarrowing, GeneratesOnlyTheRequestedDtypeAndMode) {
  const Variant& streaming = Registry::instance().get("cpu_streaming");
  for (const Mode mode : {Mode::decode, Mode::prefill, Mode::continuation}) {
    SCOPED_TRACE(mode_name(mode));
    RunOptions options;
    options.cases = 15;
    options.only_dtypes = {DType::bf16};
    options.only_modes = {mode};
    int observed = 0;
    bool strictly_inside = false;  // some continuation has a past and more than one new query
    const PropertyRun run =
        run_property(property_named(kAgreement), streaming, options, [&](const CaseObservation& o) {
          ++observed;
          EXPECT_EQ(o.problem.dtype, DType::bf16);
          for (const Sequence& seq : o.problem.sequences) {
            EXPECT_TRUE(drawn_in_mode(seq, mode)) << describe(o.problem);
            strictly_inside = strictly_inside || (seq.num_queries > 1 && seq.num_queries < seq.context_len);
          }
        });
    EXPECT_TRUE(run.passed) << run.failure;
    EXPECT_GT(observed, 0);
    EXPECT_EQ(strictly_inside, mode == Mode::continuation);
  }
}

TEST(RunPropertyNarrowing, NamingOnlyUnsupportedDtypesIsAnError) {
  const StreamingForTest f32_only("f32_decode_streaming_for_report_test");
  RunOptions options;
  options.only_dtypes = {DType::f16};
  EXPECT_TRUE(contains(
      thrown_message<std::invalid_argument>([&] { run_property(property_named(kAgreement), f32_only, options); }),
      std::string(dtype_name(DType::f16))));
  options.only_dtypes = {};
  options.only_modes = {Mode::prefill};
  EXPECT_THROW(run_property(property_named(kAgreement), f32_only, options), std::invalid_argument);
}

// --- presentation

TEST(HtmlPage, EscapesEverythingItQuotes) {
  EXPECT_EQ(html_escape("<a href=\"x\">'&'</a>"), "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
}

Report synthetic_report() {
  Report r;
  r.out_dir = "out";
  r.cases_per_property = 3;
  r.seed = 5;
  r.environment.git_revision = "abc123";
  r.environment.compiler = "GCC <test>";
  r.environment.cuda_device = "no CUDA device: none";
  VariantReport v;
  v.name = "cpu_fake";
  v.description = "a <fake> variant";
  v.capabilities.dtypes = {DType::f16};
  v.capabilities.modes = {Mode::decode};
  CellReport c;
  c.dtype = DType::f16;
  c.mode = Mode::decode;
  c.cases = 3;
  c.histogram.add(0, 0, 10);
  c.histogram.add(1, 0.2, 3);
  c.worst_normalized = kInf;
  c.tightness_median = 0.75;
  c.properties.push_back(
      PropertyOutcome{"UlpBoundedAgreement", Verdict::failed, 3, 2, "boom <here>", "pacheck replay x.json --variant cpu_fake"});
  v.cells.push_back(c);
  r.variants.push_back(v);
  VariantReport skipped;
  skipped.name = "cuda_fake";
  skipped.skipped = true;
  skipped.skip_reason = "no CUDA device: none";
  skipped.capabilities.needs_gpu = true;
  r.variants.push_back(skipped);
  r.kill_matrix_note = "no mutants are registered";
  r.coverage_note = "no coverage run found";
  return r;
}

TEST(CompareReports, ReadsOnlyAReportOfTheSameSchema) {
  const fs::path dir = fresh_dir("compare_read");
  const auto refuses = [&](const std::string& text, const std::string& mentions) {
    std::ofstream(dir / "old.json") << text;
    EXPECT_TRUE(contains(thrown_message<std::runtime_error>([&] { read_ulp_json(dir / "old.json"); }), mentions));
  };
  refuses("not json", "is not a pacheck report's ulp.json");
  refuses("{\"schema\": \"other\"}", "is not a pacheck report's ulp.json");
  refuses("{\"schema\": \"pacheck.ulp-report\", \"schema_version\": 2, \"variants\": []}", "schema version 2");
  EXPECT_THROW(read_ulp_json(dir / "missing.json"), std::runtime_error);
  std::ofstream(dir / "good.json") << to_json(synthetic_report()).dump();
  EXPECT_EQ(read_ulp_json(dir / "good.json")["variants"].size(), 2u);
  fs::remove_all(dir);
}

TEST(HtmlPage, ShowsEveryVariantWithoutScriptsOrNetwork) {
  const std::string html = render_html(synthetic_report());
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("http://"), html.find("http://www.w3.org/2000/svg"));  // only the SVG namespace
  EXPECT_EQ(html.find("https://"), std::string::npos);
  for (const char* shown : {"id=\"v-cpu_fake\"", "a &lt;fake&gt; variant", "boom &lt;here&gt;",
                            "Skipped: no CUDA device: none", "No kill matrix: no mutants are registered",
                            "no coverage run found", ">inf<"})  // the last: the infinite ratio, spelled out
    EXPECT_TRUE(contains(html, shown));
}

TEST(HtmlPage, HistogramHasABarPerNonEmptyBinColouredByItsWorstRatio) {
  UlpHistogram h;
  h.add(0, 0, 100);
  h.add(3, 0.7, 10);
  h.add(1e9, 0.2);  // far off in ulps, well inside its bound: no alarm
  h.add(kInf, kInf);
  const std::string svg = histogram_svg(h, "t", "ulps");
  std::size_t bars = 0;
  for (std::size_t at = svg.find("<rect"); at != std::string::npos; at = svg.find("<rect", at + 1)) ++bars;
  EXPECT_EQ(bars, 4u);
  EXPECT_TRUE(contains(svg, "100 elements at 0 ulps"));
  EXPECT_TRUE(contains(svg, "1 elements at non-finite ulps"));
  const auto class_of_bar = [&](const std::string& label) {
    const std::size_t title = svg.find("elements at " + html_escape(label) + " ulps");
    const std::size_t rect = svg.rfind("<rect class=\"", title);
    return svg.substr(rect + 13, svg.find('"', rect + 13) - rect - 13);
  };
  EXPECT_EQ(class_of_bar("0"), "b-ok");
  EXPECT_EQ(class_of_bar("<=4"), "b-near");
  EXPECT_EQ(class_of_bar(">1048576"), "b-ok");
  EXPECT_EQ(class_of_bar("non-finite"), "b-nan");
}

TEST(UlpJson, NonFiniteFiguresAreStrings) {
  EXPECT_EQ(json_number(kInf), "inf");
  EXPECT_EQ(json_number(-kInf), "-inf");
  EXPECT_EQ(json_number(std::nan("")), "nan");
  EXPECT_EQ(json_number(2.5), 2.5);
  const nlohmann::json j = to_json(synthetic_report());
  EXPECT_EQ(j["schema"], "pacheck.ulp-report");
  const nlohmann::json& cell = j["variants"][0]["cells"][0];
  EXPECT_EQ(cell["worst_normalized_error"], "inf");
  EXPECT_EQ(cell["tightness"]["median"], 0.75);
  EXPECT_EQ(cell["verdict"], "fail");
  EXPECT_EQ(cell["properties"][0]["replay"], "pacheck replay x.json --variant cpu_fake");
  EXPECT_EQ(cell["properties"][0]["failed_cases"], 2);
  EXPECT_EQ(cell["histogram"][0], 10);
  EXPECT_EQ(j["variants"][1]["status"], "skipped");
  EXPECT_EQ(j["kill_matrix"]["absent"], "no mutants are registered");
  EXPECT_EQ(j["coverage"]["absent"], "no coverage run found");
}

TEST(Environment, NamesTheRevisionCompilerAndDevice) {
  const Environment e = collect_environment(PACHECK_SOURCE_DIR, "cmd");
  EXPECT_FALSE(e.git_revision.empty());
  EXPECT_TRUE(e.compiler.rfind("GCC", 0) == 0 || e.compiler.rfind("Clang", 0) == 0) << e.compiler;
  EXPECT_FALSE(e.cuda_device.empty());
  EXPECT_EQ(e.command_line, "cmd");
  EXPECT_EQ(e.generated_at.size(), 20u);  // ISO 8601 in UTC: YYYY-MM-DDThh:mm:ssZ
  const Environment elsewhere = collect_environment("/nonexistent/checkout", "cmd");
  EXPECT_EQ(elsewhere.git_revision.rfind("unknown", 0), 0u) << elsewhere.git_revision;
}

void write_file(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

TEST(ReportFiles, RemovesOnlyWhatItsManifestListsInsideTheFolder) {
  const fs::path root = fresh_dir("manifest");
  const fs::path out = root / "report";
  write_file(out / "cases/v/ours.json", "{}");
  write_file(out / "cases/v/user.json", "{}");
  write_file(out / "failures/w/ours.json", "{}");
  write_file(root / "outside.txt", "x");
  write_file(out / kManifestName, "[\"cases/v/ours.json\", \"failures/w/ours.json\", \"../outside.txt\", \"" +
                                      (root / "outside.txt").string() + "\", 7]");
  remove_previous_report(out);
  EXPECT_FALSE(fs::exists(out / "cases/v/ours.json"));
  EXPECT_TRUE(fs::exists(out / "cases/v/user.json"));
  EXPECT_FALSE(fs::exists(out / "failures/w")) << "a folder the removal left empty goes too";
  EXPECT_TRUE(fs::exists(root / "outside.txt")) << "an entry outside the folder is ignored";
  EXPECT_EQ(case_files_in(out), (std::set<std::string>{"cases/v/user.json"}));
  fs::remove_all(root);
}

TEST(ReportFiles, AFolderWithoutAManifestOrWithAForeignOneLosesNothing) {
  const fs::path out = fresh_dir("foreign");
  write_file(out / "cases/user.json", "{}");
  remove_previous_report(out);
  EXPECT_TRUE(fs::exists(out / "cases/user.json"));
  write_file(out / kManifestName, "{\"cases/user.json\": 1}");
  remove_previous_report(out);
  EXPECT_TRUE(fs::exists(out / "cases/user.json"));
  fs::remove_all(out);
}

}  // namespace
}  // namespace pacheck::reports
