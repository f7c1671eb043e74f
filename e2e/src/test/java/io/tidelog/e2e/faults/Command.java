package io.tidelog.e2e.faults;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Runs a short system command ({@code ip}, {@code mount}, {@code kill}) and fails loudly. */
final class Command {
  private static final long TIMEOUT_S = 30;

  private Command() {}

  static String run(String... command) throws IOException, InterruptedException {
    Result result = attempt(command);
    if (result.exitCode != 0) {
      throw new IOException(
          String.join(" ", command) + " exited with " + result.exitCode + ": " + result.output);
    }
    return result.output;
  }

  /** Runs the command and returns its exit code and output, whatever the code. */
  static Result attempt(String... command) throws IOException, InterruptedException {
    Process process = new ProcessBuilder(List.of(command)).redirectErrorStream(true).start();
    if (!process.waitFor(TIMEOUT_S, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      throw new IOException(String.join(" ", command) + " did not finish in " + TIMEOUT_S + " s");
    }
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    return new Result(process.exitValue(), output.strip());
  }

  record Result(int exitCode, String output) {}
}
