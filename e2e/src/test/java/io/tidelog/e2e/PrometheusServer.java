package io.tidelog.e2e;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * A real Prometheus (Debian's {@code prometheus} package) on a free loopback port, scraping the
 * given targets every second, each with the target labels a PodMonitor or ServiceMonitor would give
 * it.
 */
final class PrometheusServer implements AutoCloseable {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  /** A scrape target: {@code 127.0.0.1:port} with these labels. */
  record Target(String job, int port, Map<String, String> labels) {}

  private final Process process;
  private final int port;

  private PrometheusServer(Process process, int port) {
    this.process = process;
    this.port = port;
  }

  static PrometheusServer start(Path dir, Target... targets) throws Exception {
    StringBuilder config =
        new StringBuilder("global: {scrape_interval: 1s, evaluation_interval: 1s}\n");
    config.append("scrape_configs:\n");
    for (Target target : targets) {
      config
          .append("  - job_name: ")
          .append(target.job())
          .append("\n    static_configs: [{targets: ['127.0.0.1:")
          .append(target.port())
          .append("'], labels: {")
          .append(
              target.labels().entrySet().stream()
                  .map(e -> e.getKey() + ": " + e.getValue())
                  .collect(Collectors.joining(", ")))
          .append("}}]\n");
    }
    Path configFile = dir.resolve("prometheus.yml");
    Files.writeString(configFile, config);
    int port = LoopbackPorts.free();
    Process process =
        new ProcessBuilder(
                "prometheus",
                "--config.file=" + configFile,
                "--storage.tsdb.path=" + dir.resolve("data"),
                "--web.listen-address=127.0.0.1:" + port)
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve("prometheus.log").toFile())
            .start();
    PrometheusServer server = new PrometheusServer(process, port);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (!server.isReady()) {
      if (System.nanoTime() > deadline || !process.isAlive()) {
        server.close();
        throw new IOException(
            "Prometheus did not start: " + Files.readString(dir.resolve("prometheus.log")));
      }
      Thread.sleep(200);
    }
    return server;
  }

  private boolean isReady() {
    try {
      return HTTP.send(
                  HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/-/ready"))
                      .timeout(Duration.ofSeconds(5))
                      .build(),
                  HttpResponse.BodyHandlers.discarding())
              .statusCode()
          == 200;
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /** The answer of {@code /api/v1/query}: its {@code status}, {@code error} and {@code data}. */
  JsonNode query(String promql) throws IOException, InterruptedException {
    HttpResponse<String> response =
        HTTP.send(
            HttpRequest.newBuilder(
                    URI.create(
                        "http://127.0.0.1:"
                            + port
                            + "/api/v1/query?query="
                            + URLEncoder.encode(promql, StandardCharsets.UTF_8)))
                .timeout(Duration.ofSeconds(30))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    return JSON.readTree(response.body());
  }

  @Override
  public void close() throws InterruptedException {
    process.destroy();
    if (!process.waitFor(30, TimeUnit.SECONDS)) {
      process.destroyForcibly();
    }
  }
}
