package io.tidelog.operator.certificates;

import java.io.IOException;
import java.io.StringReader;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.security.PrivateKey;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import org.bouncycastle.asn1.pkcs.PrivateKeyInfo;
import org.bouncycastle.cert.X509CertificateHolder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.openssl.PEMKeyPair;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.openssl.jcajce.JcaPEMKeyConverter;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.openssl.jcajce.JcaPKCS8Generator;

/**
 * The PEM text of certificates and private keys: keys as unencrypted PKCS#8 ({@code PRIVATE KEY}),
 * which Kafka's PEM keystores, etcd and OpenSSL all read.
 */
public final class Pem {
  private Pem() {}

  public static String of(X509Certificate... certificates) {
    return write(List.of(certificates));
  }

  public static String of(List<X509Certificate> certificates) {
    return write(certificates);
  }

  public static String of(PrivateKey key) {
    try {
      return write(List.of(new JcaPKCS8Generator(key, null).generate()));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The certificates in {@code pem}, in order; blocks of other kinds are skipped. */
  public static List<X509Certificate> certificates(String pem) {
    List<X509Certificate> certificates = new ArrayList<>();
    JcaX509CertificateConverter converter = new JcaX509CertificateConverter();
    try (PEMParser parser = new PEMParser(new StringReader(pem))) {
      for (Object block = parser.readObject(); block != null; block = parser.readObject()) {
        if (block instanceof X509CertificateHolder holder) {
          certificates.add(converter.getCertificate(holder));
        }
      }
    } catch (IOException | CertificateException e) {
      throw new IllegalArgumentException("not PEM certificates: " + e.getMessage(), e);
    }
    return certificates;
  }

  /**
   * The first private key in {@code pem}: unencrypted PKCS#8 ({@code PRIVATE KEY}) or OpenSSL's
   * traditional PKCS#1 or SEC1 ({@code RSA PRIVATE KEY}, {@code EC PRIVATE KEY}), as cert-manager
   * writes by default.
   */
  public static PrivateKey privateKey(String pem) {
    try (PEMParser parser = new PEMParser(new StringReader(pem))) {
      for (Object block = parser.readObject(); block != null; block = parser.readObject()) {
        if (block instanceof PrivateKeyInfo info) {
          return new JcaPEMKeyConverter().getPrivateKey(info);
        }
        if (block instanceof PEMKeyPair pair) {
          return new JcaPEMKeyConverter().getPrivateKey(pair.getPrivateKeyInfo());
        }
      }
    } catch (IOException e) {
      throw new IllegalArgumentException("not a PEM private key: " + e.getMessage(), e);
    }
    throw new IllegalArgumentException("no unencrypted private key in the PEM text");
  }

  private static String write(List<?> objects) {
    StringWriter text = new StringWriter();
    try (JcaPEMWriter writer = new JcaPEMWriter(text)) {
      for (Object object : objects) {
        writer.writeObject(object);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return text.toString();
  }
}
