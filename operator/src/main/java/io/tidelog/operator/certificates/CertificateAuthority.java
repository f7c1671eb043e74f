package io.tidelog.operator.certificates;

import java.math.BigInteger;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.List;
import javax.security.auth.x500.X500Principal;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x500.X500NameBuilder;
import org.bouncycastle.asn1.x500.style.BCStyle;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.CertIOException;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509ExtensionUtils;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * A certificate authority: its self-signed certificate and its key, which issues certificates for
 * servers and clients. Keys are ECDSA P-256 (made by the JDK), signatures SHA256withECDSA;
 * certificates are built by Bouncy Castle.
 *
 * @param certificate the authority's own certificate
 * @param key its private key
 */
public record CertificateAuthority(X509Certificate certificate, PrivateKey key) {
  /** The organization every subject the operator makes carries, as {@code O=tidelog.io}. */
  public static final String ORGANIZATION = "tidelog.io";

  private static final SecureRandom RANDOM = new SecureRandom();
  private static final String SIGNATURE = "SHA256withECDSA";

  /** A certificate and its private key, issued by an authority. */
  public record Issued(X509Certificate certificate, PrivateKey key) {}

  /** A new authority named {@code commonName}, valid from {@code now} for {@code validity}. */
  public static CertificateAuthority create(String commonName, Instant now, Duration validity) {
    KeyPair keys = newKeys();
    X500Name subject = name(commonName);
    try {
      X509v3CertificateBuilder builder =
          new JcaX509v3CertificateBuilder(
              subject,
              serial(),
              Date.from(now.minus(Duration.ofMinutes(5))), // clocks a little behind ours
              Date.from(now.plus(validity)),
              subject,
              keys.getPublic());
      JcaX509ExtensionUtils extensions = new JcaX509ExtensionUtils();
      builder
          .addExtension(Extension.basicConstraints, true, new BasicConstraints(0))
          .addExtension(
              Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign))
          .addExtension(
              Extension.subjectKeyIdentifier,
              false,
              extensions.createSubjectKeyIdentifier(keys.getPublic()));
      return new CertificateAuthority(sign(builder, keys.getPrivate()), keys.getPrivate());
    } catch (GeneralSecurityException | CertIOException e) {
      throw new IllegalStateException("cannot make a certificate authority", e);
    }
  }

  /**
   * A certificate for {@code commonName}, good for TLS servers and clients both (a broker is each
   * to the others), naming {@code dnsNames} as its subject alternative names.
   */
  public Issued issue(String commonName, List<String> dnsNames, Instant now, Duration validity) {
    KeyPair keys = newKeys();
    Instant notAfter = now.plus(validity);
    if (notAfter.isAfter(certificate.getNotAfter().toInstant())) {
      notAfter = certificate.getNotAfter().toInstant(); // never outlives its issuer
    }
    try {
      X509v3CertificateBuilder builder =
          new JcaX509v3CertificateBuilder(
              certificate,
              serial(),
              Date.from(now.minus(Duration.ofMinutes(5))),
              Date.from(notAfter),
              name(commonName),
              keys.getPublic());
      JcaX509ExtensionUtils extensions = new JcaX509ExtensionUtils();
      builder
          .addExtension(Extension.basicConstraints, true, new BasicConstraints(false))
          .addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature))
          .addExtension(
              Extension.extendedKeyUsage,
              false,
              new ExtendedKeyUsage(
                  new KeyPurposeId[] {
                    KeyPurposeId.id_kp_serverAuth, KeyPurposeId.id_kp_clientAuth
                  }))
          .addExtension(
              Extension.authorityKeyIdentifier,
              false,
              extensions.createAuthorityKeyIdentifier(certificate))
          .addExtension(
              Extension.subjectKeyIdentifier,
              false,
              extensions.createSubjectKeyIdentifier(keys.getPublic()));
      if (!dnsNames.isEmpty()) {
        builder.addExtension(
            Extension.subjectAlternativeName,
            false,
            new GeneralNames(
                dnsNames.stream()
                    .map(n -> new GeneralName(GeneralName.dNSName, n))
                    .toArray(GeneralName[]::new)));
      }
      return new Issued(sign(builder, key), keys.getPrivate());
    } catch (GeneralSecurityException | CertIOException e) {
      throw new IllegalStateException("cannot issue a certificate for " + commonName, e);
    }
  }

  /**
   * Whether {@code issued} is due for renewal: within {@code renewalDays} of its expiry, unless it
   * already lasts as long as this authority (another would expire no later).
   */
  public boolean expiresSoon(X509Certificate issued, Instant now, int renewalDays) {
    return issued.getNotAfter().toInstant().isBefore(now.plus(Duration.ofDays(renewalDays)))
        && issued.getNotAfter().before(certificate.getNotAfter());
  }

  /** Whether this authority signed {@code issued}. */
  public boolean signed(X509Certificate issued) {
    try {
      issued.verify(certificate.getPublicKey());
      return true;
    } catch (GeneralSecurityException e) {
      return false;
    }
  }

  /**
   * The subject {@code commonName} gets, as Kafka's principal builder reads it from a client
   * certificate ({@link X500Principal#getName()}, RFC 2253): {@code CN=<commonName>,O=tidelog.io}.
   */
  public static String distinguishedName(String commonName) {
    try {
      return new X500Principal(name(commonName).getEncoded()).getName();
    } catch (java.io.IOException e) {
      throw new IllegalStateException("an X.500 name encodes", e);
    }
  }

  /** O first, then CN: RFC 2253 writes the most specific part first, CN=...,O=.... */
  private static X500Name name(String commonName) {
    return new X500NameBuilder(BCStyle.INSTANCE)
        .addRDN(BCStyle.O, ORGANIZATION)
        .addRDN(BCStyle.CN, commonName)
        .build();
  }

  private static X509Certificate sign(X509v3CertificateBuilder builder, PrivateKey signer)
      throws GeneralSecurityException {
    try {
      return new JcaX509CertificateConverter()
          .getCertificate(builder.build(new JcaContentSignerBuilder(SIGNATURE).build(signer)));
    } catch (OperatorCreationException e) {
      throw new GeneralSecurityException(e);
    }
  }

  private static KeyPair newKeys() {
    try {
      KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
      generator.initialize(new ECGenParameterSpec("secp256r1"), RANDOM);
      return generator.generateKeyPair();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("the JDK makes EC P-256 keys", e);
    }
  }

  private static BigInteger serial() {
    return new BigInteger(127, RANDOM).add(BigInteger.ONE);
  }
}
