package io.tidelog.broker;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** One scrape of a {@code /metrics} endpoint in Prometheus text format, parsed into samples. */
record Scrape(String body, Map<String, Double> samples) {
  private static final Pattern SAMPLE =
      Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\\{(.*)\\})?\\s+(\\S+)(?:\\s+\\d+)?$");
  private static final Pattern LABEL =
      Pattern.compile("([a-zA-Z_]\\w*)=\"((?:[^\"\\\\]|\\\\.)*)\"");

  static Scrape of(int httpPort) throws IOException, InterruptedException {
    HttpResponse<String> response =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + httpPort + "/metrics"))
                    .timeout(Duration.ofSeconds(30))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
    if (response.statusCode() != 200) {
      throw new IOException("GET /metrics answered " + response.statusCode());
    }
    return parse(response.body());
  }

  static Scrape parse(String body) {
    Map<String, Double> samples = new LinkedHashMap<>();
    for (String line : body.split("\n")) {
      if (line.isBlank() || line.startsWith("#")) {
        continue;
      }
      Matcher m = SAMPLE.matcher(line);
      if (!m.matches()) {
        throw new IllegalArgumentException("not a sample line: " + line);
      }
      Map<String, String> labels = new TreeMap<>();
      if (m.group(2) != null) {
        Matcher l = LABEL.matcher(m.group(2));
        while (l.find()) {
          labels.put(l.group(1), l.group(2));
        }
      }
      samples.put(key(m.group(1), labels), Double.parseDouble(m.group(3)));
    }
    return new Scrape(body, samples);
  }

  private static String key(String name, Map<String, String> labels) {
    return name + labels;
  }

  /** The sample of {@code name} with exactly these labels (name, value, ...), or null. */
  Double value(String name, String... labels) {
    Map<String, String> wanted = new TreeMap<>();
    for (int i = 0; i < labels.length; i += 2) {
      wanted.put(labels[i], labels[i + 1]);
    }
    return samples.get(key(name, wanted));
  }

  boolean has(String name) {
    return samples.keySet().stream().anyMatch(k -> k.startsWith(name + "{"));
  }
}
