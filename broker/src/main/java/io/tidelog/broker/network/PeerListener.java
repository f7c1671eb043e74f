package io.tidelog.broker.network;

import java.util.function.BiFunction;
import javax.net.ssl.SSLEngine;

/**
 * How this broker reaches the others: the inter-broker listener's name, whose endpoint of each
 * broker it connects to, and on an SSL listener a client engine per connection (host, port), with
 * this broker's certificate for mutual TLS.
 *
 * @param sslEngines null on a PLAINTEXT listener
 */
public record PeerListener(String name, BiFunction<String, Integer, SSLEngine> sslEngines) {}
