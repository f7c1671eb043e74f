package io.tidelog.operator.certificates;

import java.util.Map;

/**
 * The layout of a certificate authority's Secret, which the Cluster reconciler writes and every
 * issuer of its certificates reads: the key and certificate ({@value #CA_KEY}, {@value #CA_CERT}),
 * during a renewal the old ones too ({@value #OLD_CA_KEY}, {@value #OLD_CA_CERT}), and the
 * renewal's step and its start in annotations.
 */
public final class CaSecret {
  public static final String CA_KEY = "ca.key";
  public static final String CA_CERT = "ca.crt";
  public static final String OLD_CA_KEY = "old-ca.key";
  public static final String OLD_CA_CERT = "old-ca.crt";

  /** "true" renews the CA now. */
  public static final String FORCE_RENEW_ANNOTATION = "tidelog.io/force-renew";

  /** The renewal's {@link Step}, while one is under way. */
  public static final String RENEWAL_ANNOTATION = "tidelog.io/ca-renewal";

  /** When the step began. */
  public static final String RENEWAL_SINCE_ANNOTATION = "tidelog.io/ca-renewal-since";

  /** The steps of a CA's renewal; none while no renewal is under way. */
  public enum Step {
    TRUSTING_BOTH("TrustingBoth", "the new CA is trusted beside the old; certificates unchanged"),
    SWITCHED("Switched", "certificates are issued by the new CA; the old one is still trusted");

    public final String reason;
    public final String meaning;

    Step(String reason, String meaning) {
      this.reason = reason;
      this.meaning = meaning;
    }
  }

  private CaSecret() {}

  /** The Secret of cluster {@code cluster}'s CA of {@code kind} (cluster, clients): its key. */
  public static String secretName(String cluster, String kind) {
    return cluster + "-" + kind + "-ca";
  }

  /** The Secret of the certificates that CA says to trust ({@value #CA_CERT}), which pods mount. */
  public static String trustSecretName(String cluster, String kind) {
    return secretName(cluster, kind) + "-cert";
  }

  /** The renewal step {@code annotations} name, or null. */
  public static Step step(Map<String, String> annotations) {
    String name = annotations == null ? null : annotations.get(RENEWAL_ANNOTATION);
    return name == null ? null : Step.valueOf(name);
  }

  /**
   * The CA whose certificates every party trusts now, to issue with: the old one while the new is
   * only being added to what pods trust ({@link Step#TRUSTING_BOTH}), else the current one.
   *
   * @param data the Secret's keys, decoded
   */
  public static CertificateAuthority issuer(
      Map<String, String> data, Map<String, String> annotations) {
    boolean old = step(annotations) == Step.TRUSTING_BOTH;
    return new CertificateAuthority(
        Pem.certificates(data.get(old ? OLD_CA_CERT : CA_CERT)).get(0),
        Pem.privateKey(data.get(old ? OLD_CA_KEY : CA_KEY)));
  }
}
