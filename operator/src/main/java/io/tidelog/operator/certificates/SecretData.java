package io.tidelog.operator.certificates;

import io.fabric8.kubernetes.api.model.Secret;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;

/** A Secret's data as text: its base64 values decoded, or text encoded for it. */
public final class SecretData {
  private SecretData() {}

  /** The text of {@code key}, or null when the Secret (or the key) is missing. */
  public static String text(Secret secret, String key) {
    if (secret == null || secret.getData() == null || secret.getData().get(key) == null) {
      return null;
    }
    return new String(
        Base64.getDecoder().decode(secret.getData().get(key)), StandardCharsets.UTF_8);
  }

  /** Every key's text; empty for a missing Secret. */
  public static Map<String, String> texts(Secret secret) {
    Map<String, String> texts = new LinkedHashMap<>();
    if (secret != null && secret.getData() != null) {
      secret.getData().keySet().forEach(key -> texts.put(key, text(secret, key)));
    }
    return texts;
  }

  /** {@code text} as a Secret's data value. */
  public static String encoded(String text) {
    return Base64.getEncoder().encodeToString(text.getBytes(StandardCharsets.UTF_8));
  }
}
