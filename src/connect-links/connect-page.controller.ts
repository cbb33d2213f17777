import { Controller, Get, Param, Post, Query, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { parseCookie, stringifySetCookie } from 'cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { PublicRoute } from '../projects/api-key.guard.js';
import { type PageResponse, PRIVATE_HEADERS, STYLESHEET } from '../projects/end-user-page.js';
import type { PageRequest } from './connect-page-guard.js';
import { COOKIE_NAME, ConnectPageService } from './connect-page.service.js';

/** The end user's HTML pages of connect links; the single-use token (then its cookie) authenticates. */
@ApiExcludeController()
@PublicRoute()
@Controller('connect')
export class ConnectPageController {
  constructor(private readonly page: ConnectPageService) {}

  @Get('assets/connect.css')
  async getConnectStylesheet(@Res() reply: FastifyReply): Promise<void> {
    await reply
      .status(200)
      .headers({ 'content-type': 'text/css; charset=utf-8', 'cache-control': 'public, max-age=3600' })
      .send(STYLESHEET);
  }

  @Get(':link_id')
  async showConnectPage(
    @Param('link_id') linkId: string,
    @Query('token') token: unknown,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    if (typeof token === 'string') {
      const opened = await this.page.open(linkId, token);
      if ('cookie' in opened) {
        const { cookie } = opened;
        const setCookie = stringifySetCookie({
          name: cookie.name,
          value: cookie.value,
          path: cookie.path,
          maxAge: cookie.maxAgeSeconds,
          httpOnly: true,
          sameSite: 'lax',
          secure: cookie.secure,
        });
        await send(reply, {
          status: 303,
          headers: { ...PRIVATE_HEADERS, location: opened.location, 'set-cookie': setCookie },
        });
        return;
      }
      await send(reply, opened);
      return;
    }
    await send(reply, await this.page.view(pageRequest(linkId, request)));
  }

  @Post(':link_id')
  async submitConnectForm(
    @Param('link_id') linkId: string,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    await send(reply, await this.page.submit(pageRequest(linkId, request), formOf(request)));
  }

  @Post(':link_id/oauth2')
  async startConnectOAuth2(
    @Param('link_id') linkId: string,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    await send(reply, await this.page.startOAuth2(pageRequest(linkId, request), formOf(request)));
  }

  @Get(':link_id/oauth2-return')
  async returnFromConnectOAuth2(
    @Param('link_id') linkId: string,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    await send(reply, await this.page.oauth2Return(pageRequest(linkId, request), queryOf(request)));
  }
}

function pageRequest(linkId: string, request: FastifyRequest): PageRequest {
  const cookies = parseCookie(request.headers.cookie ?? '');
  const origin = request.headers.origin;
  const fetchSite = request.headers['sec-fetch-site'];
  return {
    linkId,
    cookieToken: cookies[COOKIE_NAME] || undefined,
    origin: typeof origin === 'string' ? origin : undefined,
    fetchSite: typeof fetchSite === 'string' ? fetchSite : undefined,
    requestOrigin: `${request.protocol}://${request.host}`,
  };
}

/** The urlencoded form (parsed by the Fastify adapter of Nest); anything else counts as an empty form. */
function formOf(request: FastifyRequest): Record<string, unknown> {
  const body = request.body;
  return body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
}

function queryOf(request: FastifyRequest): Record<string, unknown> {
  return (request.query ?? {}) as Record<string, unknown>;
}

async function send(reply: FastifyReply, page: PageResponse): Promise<void> {
  await reply.status(page.status).headers(page.headers).send(page.body);
}
