package io.tidelog.broker;

import io.tidelog.broker.security.OpenSslEngineFactory;
import java.util.Map;

/**
 * {@link TlsIT}'s cases with {@code ssl.engine.factory.class} set to {@link OpenSslEngineFactory}:
 * mutual TLS, refused certificates counted, Metadata on the SSL listener, and the keystore replaced
 * under SASL_SSL clients, all on BoringSSL's engines.
 */
class OpenSslTlsIT extends TlsIT {
  @Override
  Map<String, String> extraConfigs() {
    return Map.of("ssl.engine.factory.class", OpenSslEngineFactory.class.getName());
  }

  @Override
  String expectedEngine() {
    return "io.netty.handler.ssl.OpenSslEngine";
  }
}
