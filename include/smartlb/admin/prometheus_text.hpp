#pragma once
// The Prometheus text exposition format (version 0.0.4): what declares a metric family (name,
// type, help, label names) and a writer that renders families and their samples from those
// declarations. Knows no metric of smartlb's: they are declared in prometheus_families.
#include <array>
#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>

#include "smartlb/telemetry/metrics.hpp"

namespace smartlb::admin {

enum class MetricType : std::uint8_t { Counter, Gauge, Histogram };
// "counter", "gauge", "histogram": the word of a # TYPE line.
std::string_view to_string(MetricType type);

// One metric family, declared once: everything the exposition says about it but its samples.
struct MetricFamily {
  static constexpr std::size_t kMaxLabels = 3;
  std::string_view name;
  MetricType type = MetricType::Gauge;
  std::string_view help;
  std::array<std::string_view, kMaxLabels> labels{};  // label names in written order; unused: ""
  std::span<const double> buckets{};                  // histograms: upper bounds (+Inf implicit)

  constexpr std::size_t label_count() const {
    std::size_t n = 0;
    while (n < kMaxLabels && !labels[n].empty()) ++n;
    return n;
  }
};

// A sample's label values, in the order of its family's label names. A sample may leave off
// trailing labels (upstream responses name a `cause` only when no response head came); those
// are not written.
using LabelValues = std::initializer_list<std::string_view>;

// Builds the exposition text one family at a time.
class PrometheusWriter {
 public:
  // Where one family's samples go, once its # HELP and # TYPE lines are written.
  class Samples {
   public:
    template <std::integral T>
    void add(LabelValues values, T v) {
      write(values, std::to_string(v));
    }
    void add(LabelValues values, double v);
    // A histogram's cumulative _bucket series (with `le`), _sum and _count.
    void histogram(LabelValues values, const telemetry::HistogramSnapshot& h);

   private:
    friend class PrometheusWriter;
    Samples(std::string& out, const MetricFamily& family) : out_(out), family_(family) {}
    void write(LabelValues values, std::string_view value, std::string_view suffix = {},
               std::string_view le = {});
    std::string& out_;
    const MetricFamily& family_;
  };

  // Writes the family's # HELP and # TYPE lines; its samples follow through the result.
  Samples family(const MetricFamily& f);
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

// A sample value as the text format writes it: shortest round-trip decimal, +Inf, -Inf, NaN.
std::string format_double(double v);
// Escapes a label value: backslash, double quote and newline; invalid UTF-8 becomes '?'.
std::string escape_label_value(std::string_view v);

}  // namespace smartlb::admin
