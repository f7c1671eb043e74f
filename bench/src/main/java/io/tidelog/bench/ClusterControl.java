package io.tidelog.bench;

import java.util.concurrent.TimeUnit;

/**
 * A benchmark's hold on the brokers it measures: a script, {@code <control> <action> <broker id>},
 * that kills ({@code kill}, SIGKILL), starts ({@code start}), pauses ({@code pause}, SIGSTOP) or
 * resumes ({@code resume}, SIGCONT) one broker of Apache Kafka's or Tidelog's cluster, whichever
 * the benchmark runs against.
 */
record ClusterControl(String script, long timeoutMs) {
  void kill(int broker) throws Exception {
    run("kill", broker);
  }

  void start(int broker) throws Exception {
    run("start", broker);
  }

  void pause(int broker) throws Exception {
    run("pause", broker);
  }

  void resume(int broker) throws Exception {
    run("resume", broker);
  }

  private void run(String action, int broker) throws Exception {
    Process process =
        new ProcessBuilder(script, action, String.valueOf(broker))
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.DISCARD)
            .start();
    if (!process.waitFor(timeoutMs, TimeUnit.MILLISECONDS) || process.exitValue() != 0) {
      process.destroyForcibly();
      throw new IllegalStateException(script + " " + action + " " + broker + " failed");
    }
  }
}
