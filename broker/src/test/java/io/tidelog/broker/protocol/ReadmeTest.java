package io.tidelog.broker.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import io.tidelog.broker.config.TopicConfigs;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;

/**
 * The README says what is served: its table of Kafka APIs gives exactly the versions ApiVersions
 * advertises, and its paragraph of topic configs names every topic config a topic may set.
 */
class ReadmeTest {
  private static final Path README = Path.of("..", "README.md");

  @Test
  void theApiTableIsWhatApiVersionsAdvertises() throws Exception {
    Map<String, String> table = new TreeMap<>();
    boolean inSection = false;
    for (String line : Files.readAllLines(README)) {
      if (line.startsWith("## ")) {
        inSection = line.equals("## Kafka APIs");
      }
      if (!inSection
          || !line.startsWith("| ")
          || line.startsWith("| API ")
          || line.startsWith("| ---")) {
        continue;
      }
      String[] cells = line.split("\\|");
      String[] names = cells[1].trim().split(",\\s*");
      String[] versions = cells[2].trim().split(",\\s*");
      for (int i = 0; i < names.length; i++) {
        String range = versions[Math.min(i, versions.length - 1)];
        table.put(names[i], range.contains("-") ? range : range + "-" + range);
      }
    }
    Map<String, String> served = new TreeMap<>();
    SupportedApis.apiVersions(Errors.NONE)
        .apiKeys()
        .forEach(
            key ->
                served.put(
                    camelCase(ApiKeys.forId(key.apiKey())),
                    key.minVersion() + "-" + key.maxVersion()));
    assertThat(table).isEqualTo(served);
  }

  @Test
  void theTopicConfigParagraphNamesEveryTopicConfig() throws Exception {
    String readme = Files.readString(README);
    int start = readme.indexOf("Topic configs: every one of Kafka 4.1's");
    String paragraph = readme.substring(start, readme.indexOf("\n\n", start));
    List<String> missing = new ArrayList<>();
    for (String name : TopicConfigs.describable().keySet()) {
      if (!paragraph.contains("`" + name + "`")) {
        missing.add(name);
      }
    }
    assertThat(missing).isEmpty();
  }

  private static String camelCase(ApiKeys key) {
    StringBuilder name = new StringBuilder();
    for (String word : key.name().toLowerCase(Locale.ROOT).split("_")) {
      name.append(Character.toUpperCase(word.charAt(0))).append(word.substring(1));
    }
    return name.toString();
  }
}
