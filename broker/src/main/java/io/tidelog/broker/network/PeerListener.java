package io.tidelog.broker.network;

import java.util.function.BiFunction;
import java.util.function.Function;
import javax.net.ssl.SSLEngine;
import javax.security.sasl.SaslClient;

/**
 * How this broker reaches the others: the inter-broker listener's name, whose endpoint of each
 * broker it connects to, on an SSL or SASL_SSL listener a client engine per connection (host,
 * port), with this broker's certificate for mutual TLS, and on a SASL listener a SASL client per
 * connection (host) and its mechanism.
 *
 * @param sslEngines null without TLS
 * @param saslMechanism null without SASL
 * @param saslClients null without SASL
 */
public record PeerListener(
    String name,
    BiFunction<String, Integer, SSLEngine> sslEngines,
    String saslMechanism,
    Function<String, SaslClient> saslClients) {}
