package io.tidelog.e2e;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Runs Prometheus' {@code promtool} (Debian's {@code prometheus} package; bin/install-prereqs). */
final class Promtool {
  private static final long TIMEOUT_SECONDS = 60;

  record Result(int exitCode, String output) {}

  private Promtool() {}

  /** Runs {@code promtool args...}, with {@code stdin} as its input when not null. */
  static Result run(String... args) throws IOException, InterruptedException {
    return runWithInput(null, args);
  }

  static Result runWithInput(String stdin, String... args)
      throws IOException, InterruptedException {
    List<String> command = new ArrayList<>(List.of("promtool"));
    command.addAll(List.of(args));
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    if (stdin != null) {
      process.getOutputStream().write(stdin.getBytes(StandardCharsets.UTF_8));
    }
    process.getOutputStream().close();
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!process.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      throw new IOException("promtool " + String.join(" ", args) + " did not finish");
    }
    return new Result(process.exitValue(), output);
  }
}
