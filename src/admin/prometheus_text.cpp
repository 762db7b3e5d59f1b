#include "smartlb/admin/prometheus_text.hpp"

#include <cassert>
#include <charconv>
#include <cmath>

namespace smartlb::admin {

std::string_view to_string(MetricType type) {
  switch (type) {
    case MetricType::Counter:
      return "counter";
    case MetricType::Gauge:
      return "gauge";
    case MetricType::Histogram:
      return "histogram";
  }
  return "untyped";
}

PrometheusWriter::Samples PrometheusWriter::family(const MetricFamily& f) {
  out_ += "# HELP ";
  out_ += f.name;
  out_ += ' ';
  out_ += f.help;
  out_ += "\n# TYPE ";
  out_ += f.name;
  out_ += ' ';
  out_ += to_string(f.type);
  out_ += '\n';
  return Samples(out_, f);
}

void PrometheusWriter::Samples::add(LabelValues values, double v) { write(values, format_double(v)); }

void PrometheusWriter::Samples::histogram(LabelValues values, const telemetry::HistogramSnapshot& h) {
  const std::span<const double> bounds = family_.buckets;
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i <= bounds.size(); ++i) {
    cumulative += i < h.buckets.size() ? h.buckets[i] : 0;
    write(values, std::to_string(cumulative), "_bucket",
          i < bounds.size() ? format_double(bounds[i]) : "+Inf");
  }
  write(values, format_double(h.sum), "_sum");
  write(values, std::to_string(cumulative), "_count");
}

void PrometheusWriter::Samples::write(LabelValues values, std::string_view value, std::string_view suffix,
                                      std::string_view le) {
  assert(values.size() <= family_.label_count() && "a sample has more labels than its family declares");
  out_ += family_.name;
  out_ += suffix;
  if (values.size() != 0 || !le.empty()) {
    out_ += '{';
    bool first = true;
    const auto label = [&](std::string_view name, std::string_view v) {
      if (!first) out_ += ',';
      first = false;
      out_ += name;
      out_ += "=\"";
      out_ += escape_label_value(v);
      out_ += '"';
    };
    std::size_t i = 0;
    for (const std::string_view v : values) label(family_.labels[i++], v);
    if (!le.empty()) label("le", le);
    out_ += '}';
  }
  out_ += ' ';
  out_ += value;
  out_ += '\n';
}

std::string format_double(double v) {
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (std::isnan(v)) return "NaN";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

std::string escape_label_value(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  const auto* s = reinterpret_cast<const unsigned char*>(v.data());
  const std::size_t n = v.size();
  for (std::size_t i = 0; i < n;) {
    const unsigned char c = s[i];
    if (c == '\\') {
      out += "\\\\";
      ++i;
      continue;
    }
    if (c == '"') {
      out += "\\\"";
      ++i;
      continue;
    }
    if (c == '\n') {
      out += "\\n";
      ++i;
      continue;
    }
    if (c < 0x80) {
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    // A well-formed UTF-8 sequence is kept; anything else becomes '?'.
    std::size_t len = 0;
    std::uint32_t cp = 0;
    if ((c & 0xe0) == 0xc0) {
      len = 2;
      cp = c & 0x1f;
    } else if ((c & 0xf0) == 0xe0) {
      len = 3;
      cp = c & 0x0f;
    } else if ((c & 0xf8) == 0xf0) {
      len = 4;
      cp = c & 0x07;
    }
    bool ok = len != 0 && i + len <= n;
    for (std::size_t k = 1; ok && k < len; ++k) {
      if ((s[i + k] & 0xc0) != 0x80)
        ok = false;
      else
        cp = (cp << 6) | (s[i + k] & 0x3f);
    }
    if (ok) {
      const std::uint32_t min = len == 2 ? 0x80 : len == 3 ? 0x800 : 0x10000;
      ok = cp >= min && cp <= 0x10ffff && (cp < 0xd800 || cp > 0xdfff);
    }
    if (ok) {
      out.append(v.substr(i, len));
      i += len;
    } else {
      out += '?';
      ++i;
    }
  }
  return out;
}

}  // namespace smartlb::admin
