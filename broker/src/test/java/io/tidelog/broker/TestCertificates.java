package io.tidelog.broker;

import java.io.OutputStream;
import java.io.StringWriter;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.concurrent.atomic.AtomicLong;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * Certificate authorities and the certificates they sign, for TLS tests, made with Bouncy Castle:
 * EC P-256 keys, certificates valid for a day naming {@code localhost} and {@code 127.0.0.1}, and
 * the files Kafka's {@code ssl.*} configs point at (PKCS12 keystores and truststores, PEM).
 */
final class TestCertificates {
  static final String PASSWORD = "test-store-secret";
  private static final AtomicLong SERIALS = new AtomicLong(System.nanoTime());

  /** A certificate authority: its key and self-signed certificate. */
  record Authority(String name, KeyPair key, X509Certificate certificate) {
    /** A certificate for {@code commonName}, signed by this authority. */
    Issued issue(String commonName) throws Exception {
      KeyPair leaf = keyPair();
      Instant now = Instant.now();
      X509v3CertificateBuilder builder =
          new JcaX509v3CertificateBuilder(
                  new X500Name("CN=" + name),
                  BigInteger.valueOf(SERIALS.incrementAndGet()),
                  Date.from(now.minus(Duration.ofMinutes(5))),
                  Date.from(now.plus(Duration.ofDays(1))),
                  new X500Name("CN=" + commonName + ",OU=tests,O=Tidelog"),
                  leaf.getPublic())
              .addExtension(
                  Extension.subjectAlternativeName,
                  false,
                  new GeneralNames(
                      new GeneralName[] {
                        new GeneralName(GeneralName.dNSName, "localhost"),
                        new GeneralName(GeneralName.iPAddress, "127.0.0.1")
                      }));
      return new Issued(leaf, sign(builder, key), certificate);
    }

    /** This authority's certificate as PEM, as librdkafka's ssl.ca.location reads it. */
    Path writePem(Path file) throws Exception {
      StringWriter text = new StringWriter();
      try (JcaPEMWriter pem = new JcaPEMWriter(text)) {
        pem.writeObject(certificate);
      }
      return replace(file, text.toString().getBytes(java.nio.charset.StandardCharsets.US_ASCII));
    }

    /** A PKCS12 truststore of this authority's certificate. */
    Path writeTruststore(Path file) throws Exception {
      KeyStore store = KeyStore.getInstance("PKCS12");
      store.load(null, null);
      store.setCertificateEntry("ca", certificate);
      return write(store, file);
    }
  }

  /** A certificate with its key and the authority that signed it. */
  record Issued(KeyPair key, X509Certificate certificate, X509Certificate issuer) {
    /** A PKCS12 keystore of the key and its chain, with {@link #PASSWORD} for store and key. */
    Path writeKeystore(Path file) throws Exception {
      KeyStore store = KeyStore.getInstance("PKCS12");
      store.load(null, null);
      store.setKeyEntry(
          "key",
          key.getPrivate(),
          PASSWORD.toCharArray(),
          new X509Certificate[] {certificate, issuer});
      return write(store, file);
    }

    /** The certificate alone as PEM, as etcd's --cert-file reads it. */
    Path writeCertificatePem(Path file) throws Exception {
      StringWriter text = new StringWriter();
      try (JcaPEMWriter pem = new JcaPEMWriter(text)) {
        pem.writeObject(certificate);
      }
      return replace(file, text.toString().getBytes(java.nio.charset.StandardCharsets.US_ASCII));
    }

    /** The key alone as unencrypted PKCS#8 PEM, as etcd's --key-file reads it. */
    Path writeKeyPem(Path file) throws Exception {
      StringWriter text = new StringWriter();
      try (JcaPEMWriter pem = new JcaPEMWriter(text)) {
        pem.writeObject(
            new org.bouncycastle.openssl.jcajce.JcaPKCS8Generator(key.getPrivate(), null));
      }
      return replace(file, text.toString().getBytes(java.nio.charset.StandardCharsets.US_ASCII));
    }

    /**
     * The key (PKCS8, unencrypted) and its chain in one PEM file, as ssl.keystore.type=PEM reads.
     */
    Path writePem(Path file) throws Exception {
      StringWriter text = new StringWriter();
      try (JcaPEMWriter pem = new JcaPEMWriter(text)) {
        pem.writeObject(
            new org.bouncycastle.openssl.jcajce.JcaPKCS8Generator(key.getPrivate(), null));
        pem.writeObject(certificate);
        pem.writeObject(issuer);
      }
      return replace(file, text.toString().getBytes(java.nio.charset.StandardCharsets.US_ASCII));
    }
  }

  private TestCertificates() {}

  static Authority authority(String name) throws Exception {
    KeyPair key = keyPair();
    Instant now = Instant.now();
    X509v3CertificateBuilder builder =
        new JcaX509v3CertificateBuilder(
                new X500Name("CN=" + name),
                BigInteger.valueOf(SERIALS.incrementAndGet()),
                Date.from(now.minus(Duration.ofMinutes(5))),
                Date.from(now.plus(Duration.ofDays(1))),
                new X500Name("CN=" + name),
                key.getPublic())
            .addExtension(Extension.basicConstraints, true, new BasicConstraints(true));
    return new Authority(name, key, sign(builder, key));
  }

  private static KeyPair keyPair() throws Exception {
    KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
    generator.initialize(new ECGenParameterSpec("secp256r1"));
    return generator.generateKeyPair();
  }

  private static X509Certificate sign(X509v3CertificateBuilder builder, KeyPair signer)
      throws Exception {
    return new JcaX509CertificateConverter()
        .getCertificate(
            builder.build(
                new JcaContentSignerBuilder("SHA256withECDSA").build(signer.getPrivate())));
  }

  private static Path write(KeyStore store, Path file) throws Exception {
    java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
    try (OutputStream out = bytes) {
      store.store(out, PASSWORD.toCharArray());
    }
    return replace(file, bytes.toByteArray());
  }

  /** Writes {@code file} whole, by a rename, as Kubernetes updates a mounted Secret. */
  private static Path replace(Path file, byte[] content) throws Exception {
    Path temporary = file.resolveSibling(file.getFileName() + ".new");
    Files.write(temporary, content);
    return Files.move(
        temporary, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
  }
}
