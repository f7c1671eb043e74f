package io.tidelog.broker.security;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.common.security.authenticator.CredentialCache;
import org.apache.kafka.common.security.scram.ScramCredential;
import org.apache.kafka.common.security.scram.internals.ScramMechanism;

/**
 * The SCRAM credentials that SCRAM mechanisms authenticate against, per mechanism and user: salted,
 * iterated hashes (salt, stored key, server key, iterations), never a password. Kept in Kafka's
 * {@link CredentialCache}, whose caches its SCRAM server reads, and replaced whole from the cluster
 * metadata as it changes.
 *
 * <p>Thread-safe: Kafka's caches are concurrent maps, and replacements run on one thread.
 */
public final class ScramCredentials {
  private final CredentialCache cache = new CredentialCache();

  /** The users each mechanism's cache holds, as the cache cannot list them. */
  private final Map<ScramMechanism, Set<String>> users = new ConcurrentHashMap<>();

  private long appliedRevision = -1;

  public ScramCredentials() {
    for (ScramMechanism mechanism : ScramMechanism.values()) {
      cache.createCache(mechanism.mechanismName(), ScramCredential.class);
      users.put(mechanism, ConcurrentHashMap.newKeySet());
    }
  }

  CredentialCache.Cache<ScramCredential> of(ScramMechanism mechanism) {
    return cache.cache(mechanism.mechanismName(), ScramCredential.class);
  }

  /**
   * Makes the credentials exactly {@code byMechanism} (mechanism to user to credential), as of the
   * metadata's {@code revision}: adds and replaces those given, removes the others. A replacement
   * older than the last one applied is ignored, so callers on different threads cannot roll the
   * credentials back.
   */
  public synchronized void replace(
      long revision, Map<ScramMechanism, Map<String, ScramCredential>> byMechanism) {
    if (revision < appliedRevision) {
      return;
    }
    appliedRevision = revision;
    for (ScramMechanism mechanism : ScramMechanism.values()) {
      replace(mechanism, byMechanism.getOrDefault(mechanism, Map.of()));
    }
  }

  private void replace(ScramMechanism mechanism, Map<String, ScramCredential> byUser) {
    CredentialCache.Cache<ScramCredential> credentials = of(mechanism);
    byUser.forEach(credentials::put);
    Set<String> known = users.get(mechanism);
    known.removeIf(
        user -> {
          boolean gone = !byUser.containsKey(user);
          if (gone) {
            credentials.remove(user);
          }
          return gone;
        });
    known.addAll(byUser.keySet());
  }
}
