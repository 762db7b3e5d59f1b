// smartlb-sim: a simulated Azure OpenAI / OpenAI backend. See docs/simulator.md.

#include "smartlb/sim/clock.hpp"
#include "smartlb/sim/sim_engine.hpp"
#include "smartlb/sim/sim_options.hpp"
#include "smartlb/sim/sim_server.hpp"

#include <cstdio>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

int main(int argc, char** argv) {
  using namespace smartlb::sim;
  const std::vector<std::string> args(argv + 1, argv + argc);
  const SimOptionsParse parsed = parse_sim_options(args);
  if (parsed.show_help) {
    std::cout << sim_usage();
    return 0;
  }
  if (!parsed.error.empty()) {
    std::cerr << "smartlb-sim: " << parsed.error << "\n(see --help)\n";
    return 2;
  }
  const SimOptions& options = parsed.options;

  // stdout carries exactly one line (the listening address); logs go to stderr.
  auto logger = spdlog::stderr_color_mt("smartlb-sim");
  spdlog::set_default_logger(logger);
  spdlog::set_level(spdlog::level::from_str(options.log_level));

  try {
    SystemClock clock;
    SimEngine engine(options.settings, clock);
    SimServer server(engine, ServerOptions{options.listen, options.port, options.threads,
                                           /*stop_on_signals=*/true, options.max_body_bytes});
    std::printf("smartlb-sim listening on %s:%u\n", server.address().c_str(),
                static_cast<unsigned>(server.port()));
    std::fflush(stdout);
    spdlog::info("sim {}: {} deployment(s), {} limiter, window {} ms, {} thread(s)", options.settings.name,
                 engine.settings().deployments.size(), limiter_kind_name(options.settings.limiter.kind),
                 options.settings.limiter.window.count(), options.threads);
    server.run();
  } catch (const std::exception& error) {
    spdlog::error("smartlb-sim: {}", error.what());
    return 1;
  }
  return 0;
}
