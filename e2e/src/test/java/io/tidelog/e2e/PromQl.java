package io.tidelog.e2e;

import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The metric names a PromQL expression (or a Grafana {@code label_values} query) reads: what is
 * left once strings, label matchers, ranges, grouping clauses, function calls, keywords and Grafana
 * variables are taken out.
 */
final class PromQl {
  private static final Pattern LABEL_VALUES =
      Pattern.compile(
          "label_values\\(\\s*(?:([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\\{[^}]*})?\\s*,)?[^)]*\\)");
  private static final Pattern IDENTIFIER = Pattern.compile("[a-zA-Z_:][a-zA-Z0-9_:]*");
  private static final Set<String> KEYWORDS =
      Set.of("and", "or", "unless", "bool", "offset", "inf", "nan", "atan2");

  private PromQl() {}

  static Set<String> metricNames(String query) {
    Set<String> names = new TreeSet<>();
    String q = query;
    Matcher labelValues = LABEL_VALUES.matcher(q);
    while (labelValues.find()) {
      if (labelValues.group(1) != null) {
        names.add(labelValues.group(1));
      }
    }
    q = labelValues.replaceAll(" ");
    q =
        q.replaceAll("\"(?:[^\"\\\\]|\\\\.)*\"", " ") // strings
            .replaceAll("\\{[^}]*}", " ") // label matchers
            .replaceAll("\\[[^]]*]", " ") // ranges
            .replaceAll("\\$\\{?\\w+}?", " ") // Grafana variables
            .replaceAll(
                "\\b(by|without|on|ignoring|group_left|group_right)\\s*\\([^)]*\\)", " "); // labels
    Matcher identifier = IDENTIFIER.matcher(q);
    while (identifier.find()) {
      String token = identifier.group();
      boolean isCall = q.substring(identifier.end()).stripLeading().startsWith("(");
      boolean isNumberPart =
          identifier.start() > 0 && Character.isDigit(q.charAt(identifier.start() - 1));
      if (!isCall && !isNumberPart && !KEYWORDS.contains(token)) {
        names.add(token);
      }
    }
    return names;
  }
}
