package io.tidelog.operator.certificates;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.X509Certificate;
import java.util.List;

/**
 * A certificate chain and the private key of its first certificate, as a user brings them for a
 * listener: checked to belong together, and written as the PEM keystore Kafka reads (the key as
 * PKCS#8, then the chain).
 */
public record CertificateAndKey(List<X509Certificate> chain, PrivateKey key) {

  /**
   * @throws IllegalArgumentException saying what is wrong: no certificate, no key, or a key that is
   *     not the certificate's
   */
  public static CertificateAndKey parse(String chainPem, String keyPem) {
    List<X509Certificate> chain = Pem.certificates(chainPem);
    if (chain.isEmpty()) {
      throw new IllegalArgumentException("no PEM certificate");
    }
    PrivateKey key = Pem.privateKey(keyPem);
    if (!signsFor(key, chain.get(0))) {
      throw new IllegalArgumentException(
          "the key is not the key of the certificate "
              + chain.get(0).getSubjectX500Principal().getName());
    }
    return new CertificateAndKey(List.copyOf(chain), key);
  }

  /** Kafka's PEM keystore: the key, unencrypted PKCS#8, and the chain. */
  public String keystorePem() {
    return Pem.of(key) + Pem.of(chain);
  }

  /** Whether {@code key} makes signatures that {@code certificate}'s public key verifies. */
  private static boolean signsFor(PrivateKey key, X509Certificate certificate) {
    String algorithm =
        switch (key.getAlgorithm()) {
          case "EC", "ECDSA" -> "SHA256withECDSA";
          case "RSA" -> "SHA256withRSA";
          case "Ed25519", "EdDSA" -> "Ed25519";
          default -> throw new IllegalArgumentException("keys of " + key.getAlgorithm());
        };
    byte[] message = "tidelog: is this the certificate's key?".getBytes(StandardCharsets.UTF_8);
    try {
      Signature signer = Signature.getInstance(algorithm);
      signer.initSign(key);
      signer.update(message);
      Signature verifier = Signature.getInstance(algorithm);
      verifier.initVerify(certificate.getPublicKey());
      verifier.update(message);
      return verifier.verify(signer.sign());
    } catch (GeneralSecurityException e) {
      return false; // a key of another kind than the certificate's
    }
  }
}
